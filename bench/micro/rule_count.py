"""How much of the deciding code is hand rules, and how many words are held in code rather than in
the lexicons: a static count over ``agent/deciding/*.py`` of a checkout.

    python -m bench.micro.rule_count [--root DIR] --out FILE

Counted per module: its lines; its phrase lists (a list, tuple or set literal of three or more
strings, or a dict whose values are such lists); its regular expressions (``re.compile`` and the
``re`` functions called with a literal pattern) and their alternatives (the ``|`` at any depth,
plus one); and, beside the code, the lexicons' classes and phrases. Run it on two checkouts to
compare them.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
import tomllib
from pathlib import Path
from typing import Any

from bench.provenance import git_commit, written_by

_RE_CALLS = {"compile", "match", "search", "fullmatch", "sub", "findall", "finditer", "split"}


def _strings(node: ast.AST) -> list[str]:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _literal(node: ast.AST) -> str | None:
    """A pattern written in the code: a string, or an f-string's literal parts."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left), _literal(node.right)
        return (left or "") + (right or "") if left is not None or right is not None else None
    return None


def count_module(source: str) -> dict[str, int]:
    tree = ast.parse(source)
    lists = phrases = regexes = alternatives = 0
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            found = _strings(node)
            if len(found) >= 3 and len(found) == len(node.elts):
                lists += 1
                phrases += len(found)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _RE_CALLS:
            owner = node.func.value
            if isinstance(owner, ast.Name) and owner.id == "re" and node.args:
                pattern = _literal(node.args[0])
                if pattern is not None:
                    regexes += 1
                    alternatives += pattern.count("|") + 1
    return {"lines": len(source.splitlines()), "phrase_lists": lists, "listed_phrases": phrases, "regexes": regexes,
            "regex_alternatives": alternatives}


def count_checkout(root: Path) -> dict[str, Any]:
    deciding = root / "agent" / "deciding"
    modules = {p.name: count_module(p.read_text(encoding="utf-8")) for p in sorted(deciding.glob("*.py"))}
    totals = {key: sum(m[key] for m in modules.values()) for key in ("lines", "phrase_lists", "listed_phrases", "regexes",
                                                                     "regex_alternatives")}
    lexicons: dict[str, dict[str, int]] = {}
    for path in sorted((deciding / "data").glob("lexicon-*.toml")):
        classes = tomllib.loads(path.read_text(encoding="utf-8"))
        lexicons[path.name] = {"classes": len(classes), "phrases": sum(len(c.get("phrases", [])) for c in classes.values())}
    return {"root": str(root), "modules": modules, "totals": totals, "lexicons": lexicons}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.micro.rule_count", description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2], help="the checkout to count")
    parser.add_argument("--out", type=Path, required=True, help="where to write the JSON")
    args = parser.parse_args(argv)
    report = {"written_by": written_by("bench.micro.rule_count", sys.argv[1:] if argv is None else argv),
              "counted_commit": git_commit(args.root), **count_checkout(args.root)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    t = report["totals"]
    print(f"{args.root}: {t['lines']} lines, {t['phrase_lists']} phrase lists ({t['listed_phrases']} phrases), "
          f"{t['regexes']} regexes ({t['regex_alternatives']} alternatives); lexicons {report['lexicons']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
