"""``berth bench``: arguments, and each shape run end to end (real run, ideal, report)."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging

from berth.bench import engine, steady
from berth.bench.arguments import DATABASE
from berth.bench.drain import backlog, drain_loop, objects
from berth.bench.figures import figures_of
from berth.bench.floor import floor_seconds
from berth.bench.ideal import drain_ideal, objects_snapshot, run_ideal
from berth.bench.ledger import scratch, server
from berth.bench.progress import ProgressBar
from berth.bench.realtime import run_shape
from berth.bench.report import (
    DrainReport,
    ShapeReport,
    drain_table,
    machine,
    shape_table,
    shape_targets,
)
from berth.bench.shapes import DrainShape, Shape, drain_shape, kueue_shape
from quota.core.errors import BerthError
from quota.manifests.documents import parse_texts


def run(args: argparse.Namespace) -> int:
    if args.shape == "engine":
        return steady.run(args) if args.steady and not args.profile else engine.run(args)
    if not args.verbose:
        # The loop logs every admission at INFO: thousands of lines a second here.
        logging.getLogger("admission").setLevel(logging.WARNING)
    try:
        if args.shape == "drain":
            drain = drain_shape(scale=args.scale, seed=args.seed)
            result = bench_drain(drain, args.database_url)
            text, data = drain_table(result), result.as_dict()
        else:
            shape = kueue_shape(args.shape, scale=args.scale, seed=args.seed)
            report = bench_shape(shape, args.scale, args.database_url, ProgressBar(args.shape))
            text, data = shape_table(report), report.as_dict()
    except ValueError as exc:
        raise BerthError(str(exc), field="--scale") from exc
    print(json.dumps(data, indent=2) if args.json else text)
    return 0


def bench_shape(
    shape: Shape, scale: float, database_url: str | None, progress: ProgressBar | None = None
) -> ShapeReport:
    """The real run through the loop, then the ideal on the same arrivals."""
    name = f"{DATABASE}_{shape.name.replace('-', '_')}"
    try:
        with server(database_url) as server_url, scratch(server_url, name) as url:
            berth = asyncio.run(run_shape(url, shape, progress))
    finally:
        if progress is not None:
            progress.end()
    if progress is not None:
        progress.note(f"{shape.name}: computing the ideal (the engine on a virtual clock)")
    arrivals = shape.arrivals()
    objects_view = objects_snapshot(parse_texts([("bench", shape.manifests())]))
    ideal = run_ideal(objects_view, arrivals, shape.nominal_milli)
    names = [c.name for c in sorted(shape.classes, key=lambda c: -c.priority)]
    berth_figures, ideal_figures = figures_of(berth, names), figures_of(ideal, names)
    return ShapeReport(
        shape.name,
        scale,
        shape.seed,
        berth_figures,
        ideal_figures,
        shape_targets(shape.name, berth_figures, ideal_figures),
        reference=shape.reference,
        machine=machine(),
        processes=berth.processes,
        writers=berth.writers,
        memory=berth.memory,
    )


def bench_drain(shape: DrainShape, database_url: str | None) -> DrainReport:
    """The loop draining the backlog, the bare floor, and the engine alone."""
    with server(database_url) as server_url:
        with scratch(server_url, f"{DATABASE}_drain") as url:
            loop = asyncio.run(drain_loop(url, shape))
        with scratch(server_url, f"{DATABASE}_floor") as url:
            floor = floor_seconds(url, shape)
    _, ideal_cycles = drain_ideal(
        objects_snapshot(objects(shape)), {w.key: w for w in backlog(shape)}
    )
    return DrainReport(
        shape.workloads,
        shape.queues,
        shape.seed,
        loop.seconds,
        loop.cycles,
        floor,
        sum(ideal_cycles),
        ideal_cycles,
        machine(),
    )
