// The explorer page's two libraries, from the npm registry, into explorer/assets/:
// - regl-scatterplot (and everything it imports) bundled into one minified IIFE that defines
//   `window.reglScatterplot`, plus one licence file naming every package inside the bundle;
// - plotly.js's "basic" distribution (scatter plots only: the metric plots), copied as
//   published, with its licence.
//   cd scripts/explorer_bundle && npm ci && npm run build
// (ASSETS=some/folder writes there instead: to compare a rebuild with the shipped files.)
import { build } from "esbuild";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const assets = process.env.ASSETS || "../../src/minimodel/explorer/assets";
const result = await build({
  entryPoints: ["entry.js"], bundle: true, minify: true, format: "iife",
  globalName: "reglScatterplot", target: "es2020", legalComments: "none",
  outfile: `${assets}/regl-scatterplot.min.js`, metafile: true,
});

// Which packages ended up in the bundle: the node_modules folders of its inputs.
const packages = new Set();
for (const input of Object.keys(result.metafile.inputs)) {
  const match = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  if (match) packages.add(match[1]);
}
// regl-scatterplot's own dist file already inlines its other dependencies (camera, gl-matrix,
// regl-line, earcut...): list them too, and theirs.
const queue = ["regl-scatterplot"];
while (queue.length) {
  const meta = JSON.parse(readFileSync(join("node_modules", queue.pop(), "package.json"), "utf8"));
  for (const dep of Object.keys(meta.dependencies || {})) {
    if (!packages.has(dep)) { packages.add(dep); queue.push(dep); }
  }
}
const sections = [...packages].sort().map((name) => {
  const folder = join("node_modules", name);
  const meta = JSON.parse(readFileSync(join(folder, "package.json"), "utf8"));
  const file = ["LICENSE", "LICENSE.md", "LICENSE.txt", "license"].map((f) => join(folder, f))
    .find((f) => { try { readFileSync(f); return true; } catch { return false; } });
  const text = file ? readFileSync(file, "utf8").trim() : `${meta.license} (no licence file in the package)`;
  return `== ${name} ${meta.version} (${meta.license}) ==\n\n${text}\n`;
});
writeFileSync(`${assets}/regl-scatterplot-LICENSE.txt`,
  "regl-scatterplot.min.js bundles these npm packages, each under its own licence:\n\n" +
  sections.join("\n"));
console.log(`bundled ${packages.size} packages:`, [...packages].sort().join(", "));

copyFileSync("node_modules/plotly.js-basic-dist-min/plotly-basic.min.js", `${assets}/plotly-basic.min.js`);
copyFileSync("node_modules/plotly.js-basic-dist-min/LICENSE", `${assets}/plotly-LICENSE.txt`);
console.log("copied plotly.js basic", JSON.parse(readFileSync(
  "node_modules/plotly.js-basic-dist-min/package.json", "utf8")).version);
