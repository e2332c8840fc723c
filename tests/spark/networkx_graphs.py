"""Writes networkx's classic small graphs as edge lists for GraphFrameTests
(jvm/src/test/scala/org/lpf/spark/tests/GraphFrameTests.scala): one file NAME.tsv per
graph in the directory given, a line "u<TAB>v" per edge in networkx's order (vertex names
as networkx has them, as text). Usage: python3 networkx_graphs.py DIR"""
import os
import sys

import networkx as nx

GRAPHS = {
    "karate": nx.karate_club_graph,
    "lesmis": nx.les_miserables_graph,
    "florentine": nx.florentine_families_graph,
    "davis": nx.davis_southern_women_graph,
}


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    for name, make in GRAPHS.items():
        g = make()
        with open(os.path.join(out, f"{name}.tsv"), "w", encoding="utf-8") as f:
            for u, v in g.edges():
                f.write(f"{u}\t{v}\n")


if __name__ == "__main__":
    main(sys.argv[1])
