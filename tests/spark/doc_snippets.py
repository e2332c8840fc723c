"""The code snippets of README.md, docs/spark.md and docs/graphframes.md, taken from the documents by their
fence markers and laid out to be run by tests/spark/doc-snippets.sh:

  python3 doc_snippets.py WORKDIR DOC...

A fence's first word is the language, the words after it are markers:
  ```scala / ```python / ```rust   a snippet that runs on its own: written to
                                   WORKDIR/<n>.scala (one spark-shell script each,
                                   `sc` and `spark` given by the shell), <n>.py, <n>.rs
  ```LANG file=NAME                written to WORKDIR/NAME, for a `run` block to use
  ```sh run                        written to WORKDIR/<n>.sh: commands run by bash in
                                   WORKDIR, which sees the repository's build/ and native/
  ```sh, ```text (no marker)       commands or output shown, not run
Any other language without `file=` is refused: a snippet the test cannot run.
Prints one line per runnable snippet: "<n> <kind> <file> <DOC:LINE>".
"""
import os
import re
import sys

RUNNABLE = {"scala": "scala", "python": "py", "rust": "rs"}
SHOWN = {"sh", "text"}


def blocks(path):
    """(line of the opening fence, language, markers, body) of each fenced block."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\S+)(.*)$", lines[i])
        if m:
            start = i
            j = i + 1
            while j < len(lines) and lines[j] != "```":
                j += 1
            if j == len(lines):
                raise SystemExit(f"{path}:{start + 1}: fence not closed")
            yield start + 1, m.group(1), m.group(2).split(), "\n".join(lines[start + 1:j]) + "\n"
            i = j + 1
        elif lines[i].startswith("```"):
            raise SystemExit(f"{path}:{i + 1}: a fence without a language: say what it is (```sh, ```text, ...)")
        else:
            i += 1


def main():
    work, docs = sys.argv[1], sys.argv[2:]
    os.makedirs(work, exist_ok=True)
    n = 0
    for doc in docs:
        for line, lang, markers, body in blocks(doc):
            where = f"{os.path.relpath(doc)}:{line}"
            files = [m[len("file="):] for m in markers if m.startswith("file=")]
            if files:
                with open(os.path.join(work, files[0]), "w", encoding="utf-8") as f:
                    f.write(body)
                continue
            if lang == "sh" and "run" in markers:
                kind, ext = "sh", "sh"
            elif lang in SHOWN:
                continue
            elif lang in RUNNABLE:
                kind, ext = lang, RUNNABLE[lang]
            else:
                raise SystemExit(f"{where}: a ```{lang} block that no test runs (mark it file=NAME or use a runnable language)")
            n += 1
            name = f"{n:02d}.{ext}"
            with open(os.path.join(work, name), "w", encoding="utf-8") as f:
                f.write(body)
            print(n, kind, name, where)


if __name__ == "__main__":
    main()
