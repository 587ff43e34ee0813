"""The share of kingmaker positions among the states first reached at each ply from the start.

    python python/examples/kingmaker_per_ply.py runs/cc3p-1

A breadth-first search from the start that does not expand finished games, as docs/results.md
counts "by ply from the start"; each state's control class is read from the tables.
"""

import sys

import kingmaker


def classes_per_ply(tables):
    """[(new states, kingmaker states)] for each ply from the start."""
    start = tables.index("start")
    seen = {start}
    frontier = [start]
    rows = []
    while frontier:
        classes = [tables.probe(s)["verdict"]["answers"]["class"] for s in frontier]
        rows.append((len(frontier), classes.count("kingmaker")))
        following = []
        for state, cls in zip(frontier, classes):
            if cls == "terminal":
                continue
            for _move, child in tables.children(state):
                if child not in seen:
                    seen.add(child)
                    following.append(child)
        frontier = following
    return rows


def main():
    tables = kingmaker.open(sys.argv[1] if len(sys.argv) > 1 else "runs/cc3p-1")
    print("ply  new  kingmaker  share")
    for ply, (new, kingmakers) in enumerate(classes_per_ply(tables)):
        print(f"{ply:>3} {new:>4} {kingmakers:>10} {kingmakers / new:>6.1%}")


if __name__ == "__main__":
    main()
