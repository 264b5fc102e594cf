"""What a build did, per pair, and how it is shown: a summary line or JSON."""

from __future__ import annotations

from manifesto.build_graph.planning import artifact_rel
from manifesto.tasks.status import Reported, Source, Status

__all__ = ["Report", "ConsoleUI"]

STATUSES = tuple(r.value for r in Reported)  # "rendered", "up to date", "skipped", "failed"


#: How many incompatible pairs a build or `matrix --format github` names one by one; more are counted.
SKIPS_NAMED = 3


def skipped_summary(pairs: int, models: int) -> str:
    """One line's worth for many incompatible pairs: how many, of how many models."""
    return (f"{pairs} pair{'' if pairs == 1 else 's'} whose cluster cannot run the model as written, "
            f"of {models} model{'' if models == 1 else 's'}")


class Report:
    """Rows (one per selected pair, sorted), check problems and pruned artifacts."""

    def __init__(self, session, items, mode: str, addresses=("//::",)) -> None:
        self.mode = mode
        self.addresses = tuple(addresses)
        self.items = items
        self.session = session
        self.statuses = [_status(item) for item in items]
        problems = list(session.problems)
        if mode == "check":
            problems += [p for p in (self._problem(session, i) for i in items) if p]
        self.problems = sorted(problems)
        self.pruned = sorted(session.pruned)
        self._rows = None

    @property
    def rows(self) -> list[dict]:
        """One dict per pair: model, cluster, status, artifact, message, cached."""
        if self._rows is None:
            self._rows = [self._row(i, s) for i, s in zip(self.items, self.statuses)]
        return self._rows

    def _row(self, item, status: str) -> dict:
        graph = self.session.graph
        row = {
            "model": graph.address(item.pair[0]),
            "cluster": item.pair[1],
            "status": status,
            "artifact": f"out/{artifact_rel(graph, item.pair, item.suffix)}" if item.status == Status.OK else None,
        }
        if item.message:
            row["message"] = item.message
        if item.how == Source.STORE:
            row["cached"] = True
        elif item.how == Source.REMOTE:
            row["cached"] = "remote"
        if item.why and status == "rendered":
            row["why"] = item.why
        return row

    @staticmethod
    def _problem(session, item):
        if item.status != Status.OK:
            return None
        rel = artifact_rel(session.graph, item.pair, item.suffix)
        on_disk = session.stat.digest(session.ws.out_key(rel))
        if on_disk == item.art_digest:
            return None
        if on_disk is None:
            return (f"out/{rel}", "missing")
        written = item.old.written if item.old is not None else ""
        if not written:
            return (f"out/{rel}", "differs from what its inputs render (hand-edited or stale)")
        if on_disk == written:
            return (f"out/{rel}", "stale: its inputs changed since it was built")
        return (f"out/{rel}", "hand-edited: differs from what the build wrote")

    def counts(self) -> dict:
        counts = dict.fromkeys(STATUSES, 0)
        for status in self.statuses:
            counts[status] += 1
        return counts

    @property
    def ok(self) -> bool:
        return not self.problems and "failed" not in self.statuses

    def summary(self) -> str:
        c = self.counts()
        line = f"{c['rendered']} rendered, {c['up to date']} up to date, {c['skipped']} skipped, {c['failed']} failed"
        if self.pruned:
            line += f", {len(self.pruned)} pruned"
        remote = sum(1 for item in self.items if item.how == Source.REMOTE)
        if remote:
            line += f"; {remote} from the remote cache"
        if self.mode == "check":
            line += f"; check: {len(self.problems)} problem{'' if len(self.problems) == 1 else 's'}"
        return line

    def work_lines(self, limit: int = SKIPS_NAMED, explain: bool = False) -> list[str]:
        """What this build did, Bazel style: a line per artifact it wrote or pruned, per
        explicitly named artifact already up to date, and per pair it found incompatible
        when there are at most ``limit`` of those (else one line counting them; the JSON
        output lists every reason). ``explain`` names every incompatible pair, those an
        earlier build found too, and adds to each rendered artifact's line what changed since
        the last build."""
        if self.mode != "write":
            return []
        lines, skips = [], []
        for item, status in zip(self.items, self.statuses):  # rows only where needed: a no-op stays cheap
            if status == "rendered" or (status == "up to date" and item.explicit):
                line = f"{status:<12}{self._row(item, status)['artifact']}"
                if explain and status == "rendered" and item.why:
                    line += f"  ({item.why})"
                lines.append(line)
            elif status == Reported.SKIPPED and (explain or item.how != Source.RECORD):  # evaluated by this build, or asked for
                row = self._row(item, status)
                skips.append(f"skipped     {row['model']} @ {row['cluster']}: {item.message}")
        lines.sort(key=lambda line: line[12:])
        lines += [f"pruned      {path}" for path in self.pruned]
        lines += self.budget_lines()
        if len(skips) > limit and not explain:
            models = {item.pair[0] for item, status in zip(self.items, self.statuses)
                      if status == Reported.SKIPPED and item.how != Source.RECORD}
            skips = [f"skipped     {skipped_summary(len(skips), len(models))} "
                     "(`manifesto build --explain` names each and why)"]
        return lines + skips

    def error_lines(self) -> list[str]:
        """One line (or block) per failed pair and per check problem."""
        failed = [self.rows[i] for i, s in enumerate(self.statuses) if s == "failed"]
        lines = [f"error: {r['model']} @ {r['cluster']}: {r['message']}" for r in failed]
        lines += [f"{path}: {why}" for path, why in self.problems]
        if self.problems:
            lines.append("To fix this, run: manifesto build " + " ".join(self.addresses))
        return lines

    def to_json(self) -> dict:
        return {
            "summary": {k.replace(" ", "_"): v for k, v in self.counts().items()},
            "pairs": self.budget_rows(),
            "problems": [{"path": p, "problem": why} for p, why in self.problems],
            "pruned": self.pruned,
        }

    # GPU budget: per pair in JSON, totals per cluster in text. It comes from the pair's record,
    # stored with the render that made the artifact, so a no-op build reports it too.
    def budget_rows(self) -> list[dict]:
        """``rows``, each built pair with its ``budget`` (GPUs, nodes, pods, roles, cost)."""
        records = self.session.state.pairs
        out = []
        for item, row in zip(self.items, self.rows):
            rec = records.get(item.pair)
            budget = rec.budget if rec is not None and item.status == Status.OK else None
            out.append({**row, "budget": budget} if budget else row)
        return out

    def budget_lines(self) -> list[str]:
        """One line per cluster: the GPUs, nodes and pods its deployments ask for, and their
        hourly cost when every priced deployment's accelerator has a price. Each deployment is
        counted once: a model that deployment targets deploy to a cluster counts as those
        targets (each one runs), not again as its matrix artifact for that cluster, which
        renders the same model for review."""
        totals: dict[str, dict] = {}
        records = self.session.state.pairs
        graph = self.session.graph
        built = [item for item in self.items if item.status == Status.OK]
        deployed = {(graph.source(item.pair[0]), item.pair[1]) for item in built if item.pair[0] in graph.deployments}
        for item in built:  # budget_rows' budgets, without building every row
            if item.pair[0] not in graph.deployments and (item.pair[0], item.pair[1]) in deployed:
                continue
            rec = records.get(item.pair)
            b = rec.budget if rec is not None else None
            if not b:
                continue
            t = totals.setdefault(item.pair[1], {"gpus": 0, "nodes": 0, "pods": 0, "deployments": 0, "cost": 0.0,
                                                   "priced": True})
            for key in ("gpus", "nodes", "pods"):
                t[key] += b[key]
            t["deployments"] += 1
            if b.get("hourly_cost") is None:
                t["priced"] = False
            else:
                t["cost"] += b["hourly_cost"]
        lines = []
        for cluster in sorted(totals):
            t = totals[cluster]
            cost = f", {round(t['cost'], 4):g} per hour" if t["priced"] else ""
            n = t["deployments"]
            lines.append(f"budget      {cluster}: {t['gpus']} GPU{'' if t['gpus'] == 1 else 's'}, {t['nodes']} "
                         f"node{'' if t['nodes'] == 1 else 's'}, {t['pods']} pod{'' if t['pods'] == 1 else 's'} "
                         f"over {n} deployment{'' if n == 1 else 's'}{cost}")
        return lines


# The words as plain strings: an enum's ``.value`` per pair is most of a no-op's report.
_RENDERED, _UP_TO_DATE = Reported.RENDERED.value, Reported.UP_TO_DATE.value
_SKIPPED, _FAILED = Reported.SKIPPED.value, Reported.FAILED.value


def _status(item) -> str:
    """The reported status of a pair: rendered, up to date, skipped or failed."""
    if item.status == Status.OK:
        return _RENDERED if item.how == Source.RENDER or item.wrote else _UP_TO_DATE
    if item.status == Status.SKIPPED and not item.explicit:
        return _SKIPPED
    return _FAILED


class ConsoleUI:
    """Warnings on stderr; a progress line only when stderr is a terminal."""

    def __init__(self, stream=None, quiet: bool = False) -> None:
        import sys

        self.stream = stream or sys.stderr
        self.tty = not quiet and self.stream.isatty()
        self.shown = False

    def warn(self, message: str) -> None:
        self._clear()
        print(f"warning: {message}", file=self.stream, flush=True)

    def wait(self, message: str) -> None:
        self._clear()
        print(message, file=self.stream, flush=True)

    def progress(self, done: int, total: int, label: str) -> None:
        if self.tty:
            width = len(str(total))
            self.stream.write(f"\r\x1b[K[{done:>{width}}/{total}] {label}")
            self.stream.flush()
            self.shown = True

    def progress_done(self) -> None:
        self._clear()

    def _clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False
