"""The byte-pair-encoding training loop, kept apart from the tokenizer class.

Algorithm (Sennrich et al. 2016, "Neural Machine Translation of Rare Words with Subword
Units", applied to bytes as in GPT-2):

1. Count the distinct pre-tokenised words of the corpus; each word starts as its bytes.
2. Count every adjacent pair of tokens, weighted by how often the word occurs.
3. Merge the most frequent pair into a new token everywhere, and repeat until the
   vocabulary has the requested size.

Why it is fast: recounting all pairs after every merge costs O(corpus) per merge. We keep
the pair counts, an index ``pair -> words that contain it`` and a max-heap of counts, and
after each merge only re-count the few words that contained the merged pair. Heap entries
go stale when a count changes; we push the new count and skip stale entries when popping
("lazy deletion"), which is cheaper than deleting from the middle of a heap.

Ties are broken deterministically: higher count first, then the smaller pair of token ids
(ids are assigned in merge order, so the whole run is a pure function of the input).
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Callable, Mapping

Pair = tuple[int, int]
ProgressFn = Callable[[int, int], None]


def merge_pair(word: list[int], a: int, b: int, new: int) -> list[int]:
    """Replace every non-overlapping (a, b) in ``word`` by ``new``, scanning left to right (the
    one merge step of training and of encoding)."""
    out: list[int] = []
    i, n = 0, len(word)
    while i < n:
        if i + 1 < n and word[i] == a and word[i + 1] == b:
            out.append(new)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out


def learn_merges(
    word_counts: Mapping[bytes, int],
    target_size: int,
    progress: ProgressFn | None = None,
) -> tuple[list[tuple[bytes, bytes]], int]:
    """Learn BPE merges until the byte vocabulary (256 bytes + new tokens) has ``target_size``.

    Args:
        word_counts: each distinct pre-token (as UTF-8 bytes) and its frequency.
        target_size: wanted number of distinct regular tokens, counting the 256 bytes.
        progress: called as ``progress(done, total)`` after each new token.

    Returns:
        ``(merges, size)``: the merges as byte pairs in rank order, and the vocabulary size
        reached. ``size < target_size`` means the corpus ran out of pairs to merge.

    A merge may produce bytes that already exist (e.g. "a"+"bc" after "ab"+"c"); like
    Hugging Face ``tokenizers`` we record the merge but reuse the existing token, so the
    vocabulary only grows by genuinely new strings. A pair that reappears after it was
    merged is merged again silently (encoding would merge it at its first rank anyway).
    """
    table: list[bytes] = [bytes([i]) for i in range(256)]
    bytes_to_id: dict[bytes, int] = {t: i for i, t in enumerate(table)}
    words: list[list[int]] = [list(w) for w in word_counts]
    freqs: list[int] = list(word_counts.values())

    counts: dict[Pair, int] = defaultdict(int)
    where: dict[Pair, set[int]] = defaultdict(set)
    for idx, (word, freq) in enumerate(zip(words, freqs)):
        for pair in zip(word, word[1:]):
            counts[pair] += freq
            where[pair].add(idx)
    heap = [(-c, a, b) for (a, b), c in counts.items()]
    heapq.heapify(heap)

    merges: list[tuple[bytes, bytes]] = []
    merged: dict[Pair, int] = {}
    total = max(target_size - len(table), 0)
    while len(table) < target_size:
        # Pop the best pair whose heap entry still matches its live count.
        best: Pair | None = None
        while heap:
            neg, a, b = heapq.heappop(heap)
            if counts.get((a, b), 0) == -neg and neg < 0:
                best = (a, b)
                break
        if best is None:
            break  # every word is a single token: nothing left to merge
        a, b = best
        if best in merged:
            new = merged[best]
        else:
            new_bytes = table[a] + table[b]
            new = bytes_to_id.get(new_bytes, -1)
            if new < 0:
                new = len(table)
                table.append(new_bytes)
                bytes_to_id[new_bytes] = new
                if progress is not None:
                    progress(len(table) - 256, total)
            merged[best] = new
            merges.append((table[a], table[b]))

        changed: set[Pair] = set()
        for idx in where.pop(best, ()):
            word = words[idx]
            if len(word) < 2:
                continue
            new_word = merge_pair(word, a, b, new)
            if len(new_word) == len(word):
                continue  # stale index: this word no longer holds the pair
            freq = freqs[idx]
            # Re-count only this word: subtract its old pairs, add its new ones.
            for pair in zip(word, word[1:]):
                counts[pair] -= freq
                changed.add(pair)
            for pair in zip(new_word, new_word[1:]):
                counts[pair] += freq
                where[pair].add(idx)
                changed.add(pair)
            words[idx] = new_word
        for pair in changed:
            c = counts[pair]
            if c > 0:
                heapq.heappush(heap, (-c, pair[0], pair[1]))
            else:
                del counts[pair]
    return merges, len(table)
