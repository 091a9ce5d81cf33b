"""The exit statuses that prose states ("exits 3 when a row is a significant regression", "exit
2", "Exit status: 0 success, 2 usage error, 1 runtime failure"), found in a text and judged by
the words nearest to them (tests/exit_codes_test.py runs it over docs/*.md and every --help).

A statement is an exit word ("exit", "exits", "exit status", "exit code", "Exit status ...:")
followed by a status, and the statuses listed after it ("..., else 4 when ...", "; 2 bad
input"). Each status is judged by its own clause (up to the next comma, semicolon, full stop or
closing parenthesis outside backquotes and parentheses), else by the sentence before the exit
word ("All of these" reaching one sentence further back). The meaning is the nearest of MEANINGS'
words; a status whose words name no meaning is only checked to be a status at all.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# Meanings and the words that say them; "no regression" says none, and flag names
# (--fail-on-regression) are left out before the words are looked for.
MEANINGS: dict[str, str] = {
    "changed": r"(?<!no )\bregressions?\b|\bchange points?\b|\bdrifts?\b|\bfound a change\b",
    "undecided": r"\bundecided\b|\bcould not decide\b|\bcannot decide\b|\bnot confirmed\b|"
                 r"\bdid not confirm\b|\btoo short to test\b|\bno answer\b",
    "interrupted": r"\binterrupted\b|\bCtrl-C\b|\bSIGINT\b|\bSIGTERM\b",
    "broken_pipe": r"\bwent away\b|\bbroken pipe\b|\bSIGPIPE\b",
    "usage": r"\busage error\b|\bbad input\b",
    "failure": r"\bruntime (?:failure|error)\b",
    "ok": r"^\s*(?:success|done)\b",
}
EXIT_WORD = re.compile(r"\bexit(?:s|ed)?\b(?:\s+(?:with|status(?:es)?|codes?|of))*"
                       r"(?:[^\n]{0,80}?:)??\s*=?\s*(?=\d)", re.I)
STATUS = re.compile(r"(\d{1,3})\b(?![.,]\d)")
NEXT = re.compile(r"[,;]\s*(?:and\s+|or\s+|else\s+)?(?=\d{1,3}\b(?![.,]\d|%))")
OR_NEXT = re.compile(r"\s+or\s+(\d{1,3})\b")
BOUNDARY = re.compile(r"\.\s|;|\n\s*\n|\||\n\s*[-*] |\n\s*\d+\. ")
FLAG = re.compile(r"--[a-z][a-z0-9-]*")


@dataclass
class Statement:
    status: int
    meaning: str      # a key of MEANINGS, or "" when its words name none
    where: str        # FILE:LINE
    text: str         # the words it was judged by


def _clause_end(text: str, i: int) -> int:
    depth, tick = 0, False
    while i < len(text):
        c = text[i]
        if c == "`":
            tick = not tick
        elif not tick and c in "([":
            depth += 1
        elif not tick and c in ")]":
            if depth == 0:
                return i
            depth -= 1
        elif not tick and depth == 0 and (c in ",;|" or (c == "." and (
                i + 1 == len(text) or text[i + 1].isspace()))):
            return i
        i += 1
    return i


def _sentence_before(text: str, i: int, floor: int) -> str:
    """The sentence before position i, from no earlier than floor (the end of the statement
    before: its words are its own)."""
    starts = [floor] + [m.end() for m in BOUNDARY.finditer(text, floor, i)]
    start = starts[-1]
    before = text[start:i]
    if re.match(r"\s*(?:all of )?(?:these|those|both)\b", before, re.I) and len(starts) > 1:
        before = text[starts[-2]:i]
    return before


def meaning(forward: str, backward: str) -> str:
    """The meaning whose words come nearest: first in the clause after the status, else last
    in the sentence before the exit word."""
    forward = " ".join(FLAG.sub("", forward).split())
    backward = " ".join(FLAG.sub("", backward).split())
    ahead = [(m.start(), name) for name, words in MEANINGS.items()
             for m in re.finditer(words, forward, re.I)]
    if ahead:
        return min(ahead)[1]
    behind = [(m.end(), name) for name, words in MEANINGS.items() if name != "ok"
              for m in re.finditer(words, backward, re.I)]
    return max(behind)[1] if behind else ""


def statements(text: str, name: str) -> list[Statement]:
    out: list[Statement] = []
    floor = 0
    for m in EXIT_WORD.finditer(text):
        if m.start() < floor:
            continue
        backward = _sentence_before(text, m.start(), floor)
        i, first = m.end(), True
        while True:
            s = STATUS.match(text, i)
            if not s:
                break
            end = _clause_end(text, s.end())
            forward = text[s.end():end]
            line = f"{name}:{text.count(chr(10), 0, s.start()) + 1}"
            found = [(int(s.group(1)), forward)]
            more = OR_NEXT.match(forward)
            if more:
                found.append((int(more.group(1)), forward[more.end():]))
            for status, words in found:
                said = meaning(words, backward if first else "")
                out.append(Statement(status, said, line, " ".join(
                    ((backward + " [exit] ") if first else "").split() + words.split())))
            first = False
            floor = end
            n = NEXT.match(text, end)
            if not n:
                break
            i = n.end()
    return out
