"""``berth bench``'s arguments, kept apart so building the CLI parser imports nothing heavy."""

from __future__ import annotations

import argparse

DATABASE = "berth_bench"
# The engine issue's shape: ClusterQueues, cohorts, pending workloads (its target is
# judged at this shape only).
ENGINE_SHAPE = (1000, 10, 50_000)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    shapes = parser.add_subparsers(dest="shape", required=True, metavar="SHAPE")
    for name, about in (
        ("kueue-baseline", "Kueue's baseline: 5 cohorts x 6 ClusterQueues, 15,000 workloads"),
        ("kueue-large", "Kueue's large scale: 10 cohorts x 100 ClusterQueues, 50,000 workloads"),
        ("drain", "a backlog of 20,000 workloads in 200 ClusterQueues, quota opened at once"),
    ):
        shape = shapes.add_parser(name, help=about, description=about)
        shape.add_argument(
            "--scale",
            type=float,
            default=1.0,
            metavar="F",
            help="shrink the counts to F of the shape's (0 < F <= 1)",
        )
        shape.add_argument("--seed", type=int, default=1)
        shape.add_argument(
            "--database-url",
            help="a PostgreSQL server whose role may create "
            f"databases (the bench makes, then drops, databases {DATABASE}_* on it); "
            "default: an embedded server in a temporary folder",
        )
        shape.add_argument("--json", action="store_true", help="print the figures as JSON")
    add_engine_arguments(
        shapes.add_parser(
            "engine",
            help="the pure engine alone: one cycle at scale (no database)",
            description="One admission cycle over 1,000 ClusterQueues in 10 cohorts with 50,000 "
            "pending workloads, and a steady-state cycle with holders and preemption; prints "
            "wall and CPU time against the 200 ms target. With --steady: the cycle after "
            "--events arrivals and finishes on the steady state, against the 50 ms target.",
        )
    )


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    queues, cohorts, workloads = ENGINE_SHAPE
    parser.add_argument("--queues", type=int, default=queues)
    parser.add_argument("--cohorts", type=int, default=cohorts)
    parser.add_argument("--workloads", type=int, default=workloads)
    parser.add_argument("--mix", choices=("random", "classes", "both"), default="both")
    parser.add_argument(
        "--nodes", type=int, default=0,
        help="add this many 8-GPU Nodes (every 50th with 2 unhealthy GPUs), split between "
             "the two flavors, so physical capacity limits admission as well as quota")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument(
        "--steady", action="store_true",
        help="time the cycle after --events arrivals and finishes on the steady state, "
             "against the 50 ms target; with --profile: profile the steady-state cycle")
    parser.add_argument(
        "--events", type=int, metavar="N",
        help="with --steady: N workloads arrive and N holders finish (default 100)")
    parser.add_argument("--sort", default="cumulative", help="pstats sort key")
