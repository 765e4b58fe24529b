"""The skill's description routes the `evals/` requests the right way, by its keywords alone.

The scorer is deterministic keyword overlap, a stand-in for the model that really routes (which only
`claude plugin eval` measures, see evals/README.md):

- The description is split at "Not for": the part before is the *scope*, the part after the *exclusions*.
- Words are lowercased, split at spaces, punctuation and "/", with hyphenated words kept whole; a crude
  stemmer drops one suffix (-ing, -able, -ed, -es, -e, -s); generic words any fine-tuning request uses
  (model, data, prompt, train, ...) and English stop words are dropped.
- The scope keywords are the words only the scope has; the exclusion keywords are the words only the
  exclusions have. A request word matches a keyword when it equals it or extends it with a hyphen
  ("qwen2-vl-7b" matches "qwen2-vl").
- A request routes to the skill when it matches at least 2 scope keywords and no exclusion keyword: the
  description says "Not for X", so X vetoes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from paths import REPO

SKILL = REPO / "skills" / "grpo-rlvr-training" / "SKILL.md"
CASES = sorted(p.parent for p in (REPO / "evals").glob("*/prompt.md"))

GENERIC = {"model", "data", "dataset", "prompt", "plus", "run", "learn", "answer", "output", "task", "train",
           "fine-tune", "want", "set", "up", "use", "go"}
STOP = {"a", "an", "and", "or", "the", "of", "to", "for", "on", "in", "it", "its", "is", "are", "be", "by",
        "with", "from", "as", "at", "that", "this", "whose", "which", "what", "how", "not", "can", "no", "such",
        "than", "into", "when", "so", "do", "does", "i", "my", "we", "our", "me", "you", "your"}
MIN_SCOPE_HITS = 2


def front_matter(path: Path) -> tuple[dict, str]:
    head, _, body = path.read_text(encoding="utf-8")[4:].partition("\n---\n")
    return yaml.safe_load(head), body


def stem(word: str) -> str:
    for suffix in ("ing", "able", "ed", "es", "e", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def words(text: str) -> set[str]:
    raw = re.findall(r"[a-z0-9][a-z0-9.+-]*", text.lower().replace("/", " "))
    out = {stem(w.strip(".-+")) for w in raw if w.strip(".-+") not in STOP | GENERIC}
    return out - STOP - GENERIC


def keywords(description: str) -> tuple[set[str], set[str]]:
    scope, sep, exclusions = description.partition("Not for")
    assert sep, "the description should state its exclusions after 'Not for'"
    s, e = words(scope), words(exclusions)
    return s - e, e - s


def hits(request: set[str], keys: set[str]) -> set[str]:
    return {k for k in keys if any(w == k or w.startswith(k + "-") for w in request)}


def routes(description: str, request: str) -> tuple[bool, set[str], set[str]]:
    scope, excluded = keywords(description)
    req = words(request)
    got, vetoed = hits(req, scope), hits(req, excluded)
    return len(got) >= MIN_SCOPE_HITS and not vetoed, got, vetoed


def description() -> str:
    return front_matter(SKILL)[0]["description"]


def should_route(case: Path) -> bool:
    tags = front_matter(case / "prompt.md")[0].get("tags", [])
    assert ("should-route" in tags) != ("should-not-route" in tags), f"{case.name}: tag it should-route or not"
    assert case.name.startswith("route-" if "should-route" in tags else "not-"), f"{case.name}: name and tag differ"
    return "should-route" in tags


def test_there_are_ten_requests_each_way():
    want = [c for c in CASES if should_route(c)]
    assert len(want) >= 10 and len(CASES) - len(want) >= 10, (len(want), len(CASES) - len(want))


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_the_description_routes_each_request(case: Path):
    routed, got, vetoed = routes(description(), front_matter(case / "prompt.md")[1])
    assert routed == should_route(case), (
        f"{case.name}: {'routed' if routed else 'not routed'}; scope keywords matched {sorted(got)}, "
        f"exclusions matched {sorted(vetoed)}")


def test_the_exclusions_do_work():
    """Without its exclusions the same description would take requests it must not (the VLM one at least)."""
    scope_only = description().partition("Not for")[0] + " Not for x."
    wrongly = [c.name for c in CASES if not should_route(c) and routes(scope_only, front_matter(c / "prompt.md")[1])[0]]
    assert "not-vision-language-rl" in wrongly, wrongly


def test_the_description_leads_with_grpo_and_verifiable_rewards():
    desc = description()
    assert desc.startswith("GRPO and RLVR"), desc[:40]
    assert "verifiable rewards" in desc[:120]
    assert not re.search(r"\b(fine-tune|train or)\b", desc[:80], re.I), "a generic fine-tuning opening competes"
    # no process sentence: the steps of the flow belong in the body, not in what routing reads
    for step in ("preflight", "walks the user", "render", "50-100", "grpo-rlvr CLI"):
        assert step not in desc, f"the description still narrates the process ({step!r})"
