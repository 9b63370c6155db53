"""Record the SHA-256 of the lab's content (and the judge's data files) in
src/minimodel/lab/content/MANIFEST.json. Run after editing lab content; the judge refuses to
grade when a file differs from the manifest (see minimodel/lab/integrity.py).

    python scripts/update_lab_manifest.py
"""

from minimodel.lab.integrity import write_manifest

if __name__ == "__main__":
    print(f"wrote {write_manifest()}")
