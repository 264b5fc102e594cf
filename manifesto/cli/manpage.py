"""``manifesto man``: the manual page, generated from the argparse tree (argparse-manpage)
plus the sections a parser cannot know: environment, files, exit status and examples.

The date is ``SOURCE_DATE_EPOCH`` when set (reproducible builds), else the release date
of this version, so the page never changes with the day it is generated.
"""

from __future__ import annotations
from manifesto.cli.summaries import SUMMARIES

__all__ = ["register", "manpage", "RELEASE_DATE"]

# The release date of manifesto.__version__; bump both together.
RELEASE_DATE = (2026, 12, 1)
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")

_DESCRIPTION = r"""
.B manifesto
turns a model spec (what to serve: model, roles, parallelism, routing, vLLM arguments)
and a cluster profile (where: accelerators, storage, fabric environment, images) into one
artifact you can read, diff, edit and apply: plain Kubernetes YAML, or a self-contained
Slurm batch script when the cluster profile says
.BR "platform: slurm" .
Every artifact starts with a comment header holding the command and its fully expanded
inputs, so it can be regenerated exactly.
.PP
.I SPEC
and
.B \-\-cluster
take a path, a catalog name such as
.B qwen/aggregated
or
.BR example\-gb200 ,
or a build address such as
.BR //models/qwen:aggregated .
Names resolve in the user catalog first, then in the bundled examples.
.PP
The build commands
.RB ( build ", " list ", " deps ", " dependents ", " matrix ", " clean )
work on the graph that
.B BUILD.yaml
declares. An address names one target
.RB ( //models/qwen:aggregated ),
a directory
.RB ( //models/qwen: " or " //models/qwen:all ),
or a tree
.RB ( //models:: " or " //models/... );
the leading
.B //
may be left out.
.PP
Commands that print data take
.BR "\-o, \-\-output text|json|yaml|name" .
"""

_ENVIRONMENT = r"""
.TP
.B MANIFESTO_CLUSTER
cluster profile used when
.B \-\-cluster
is not given.
.TP
.B MANIFESTO_CLUSTER_MAP
.I context=path
pairs: the cluster profile for each kube context.
.TP
.B MANIFESTO_NAMESPACE
namespace used when
.B \-\-namespace
is not given (default: the kube context's, else
.BR default ).
.TP
.B MANIFESTO_ROUTING_PROFILE
routing profile used when
.B \-\-routing\-profile
is not given.
.TP
.B MANIFESTO_RENDER_OUT
file written by
.B render file
and read by
.BR "file diff" " and " "file apply" .
.TP
.B MANIFESTO_CONFIG_HOME
the user catalog folder (default:
.IR $XDG_CONFIG_HOME/llm\-manifesto ,
else
.IR ~/.config/llm\-manifesto ).
.TP
.B MANIFESTO_NO_CACHE
set to 1 to turn off the local render cache.
.TP
.B MANIFESTO_STORE_LIMIT
the size the build's store
.RI ( out/.cache/tasks )
is pruned to stay within, least recently used entries first (a byte count or a quantity
such as
.BR 2Gi ;
default:
.B store_limit
in BUILD.yaml, else 1Gi); see
.BR "clean \-\-gc" .
.TP
.BR MANIFESTO_KUBECTL_TIMEOUT ", " MANIFESTO_KUBECTL_RETRIES
seconds per kubectl read (default 300, 0 disables the bound) and extra attempts after a
transient failure (default 4).
.TP
.B MANIFESTO_COMPLETE_TIMEOUT
seconds a TAB waits for live names (instances from kubectl, jobs from squeue); default
0.8, at most 30.
.TP
.B MANIFESTO_TRACE
set to 1 to log every kubectl call and its duration on standard error (also
.BR \-v ).
.TP
.B HF_TOKEN
Hugging Face token;
.BR deploy ", " "file apply" " and " "test e2e"
store it in the namespace's
.B hf\-secret
over standard input. It is never written into an artifact.
.TP
.B SOURCE_DATE_EPOCH
the date of this manual page, when set.
.PP
Settings may also live in
.I ./.env
or the user catalog's
.IR .env ;
the real environment wins.
"""

_FILES = r"""
.TP
.I ~/.config/llm\-manifesto/{models,clusters,routing}/
the user catalog; its entries shadow bundled entries of the same name.
.TP
.I ~/.config/llm\-manifesto/.env
default settings.
.TP
.I $XDG_CACHE_HOME/llm\-manifesto/render/
the local render cache.
.TP
.I BUILD.yaml
build targets, sources and render options of a workspace.
.TP
.I out/<cluster>/<model path>.yaml|.sbatch
build artifacts;
.I out/.cache/
holds the build's task cache.
.TP
.I /tmp/manifesto.yaml
the default file of
.BR "render file" " and " "file diff/apply" .
"""

_EXIT_STATUS = r"""
.TP
.B 0
success.
.TP
.B 1
an error a user can act on (one line per problem, each starting with
.BR error: ),
a failed or stale
.BR build ,
or differences found by
.BR "file diff" .
.TP
.B 2
a usage error: an unknown command or option, or a missing argument.
.TP
.B 130
interrupted.
"""

_EXAMPLES = r"""
Render a spec to standard output and explain how it resolves:
.PP
.nf
.RS
manifesto render manifest qwen/qwen3\-0.6b \-\-cluster example\-gb200 \-n demo
manifesto explain qwen/qwen3\-0.6b \-\-cluster example\-gb200 \-n demo \-o json
.RE
.fi
.PP
Build every bundled pair into out/, then deploy one artifact:
.PP
.nf
.RS
manifesto build //::
manifesto list models/qwen: \-o json
manifesto deploy qwen/aggregated \-\-cluster example\-gb200 \-n demo
.RE
.fi
.PP
Edit a rendered file before applying it:
.PP
.nf
.RS
manifesto render file qwen/aggregated \-\-cluster example\-gb200 \-o qwen.yaml
manifesto file diff qwen.yaml
manifesto file apply qwen.yaml
.RE
.fi
.PP
Submit to Slurm and cancel the job:
.PP
.nf
.RS
manifesto slurm submit qwen/qwen3\-0.6b \-\-cluster example\-slurm
manifesto slurm stop 12345 \-\-cluster example\-slurm
.RE
.fi
.PP
Enable completion:
.PP
.nf
.RS
source <(manifesto completion bash)
.RE
.fi
"""

_SEE_ALSO = r"""
.BR kubectl (1),
.BR sbatch (1),
.BR scancel (1)
"""


def register(sub, add) -> None:
    p = add(sub, "man", help=SUMMARIES["man"])
    p.set_defaults(func=_man)


def _date(env) -> str:
    """``Month D, YYYY`` (the form man and mandoc parse) in English whatever the locale."""
    import time

    epoch = env.get("SOURCE_DATE_EPOCH", "").strip()
    year, month, day = time.gmtime(int(epoch))[:3] if epoch.isascii() and epoch.isdigit() else RELEASE_DATE
    return f"{_MONTHS[month - 1]} {day}, {year}"


def _wrap(page: str, width: int = 80) -> str:
    """Break filled text lines longer than ``width`` at spaces (roff joins them again), so
    ``mandoc -Tlint`` has nothing to say; requests and no-fill blocks stay as they are."""
    out, fill = [], True
    for line in page.splitlines():
        if line.startswith(".nf"):
            fill = False
        elif line.startswith(".fi"):
            fill = True
        while fill and len(line.encode()) > width and not line.startswith((".", "'")):
            cut = line.rfind(" ", 0, width)
            while cut > 0 and line[cut + 1:cut + 2] in (".", "'", " "):
                cut = line.rfind(" ", 0, cut)
            if cut <= len(line) - len(line.lstrip(" ")):
                break
            out.append(line[:cut])
            line = line[cut + 1:]
        out.append(line)
    return "\n".join(out) + "\n"


def manpage(env=None) -> str:
    """The roff source of manifesto(1)."""
    import os

    from argparse_manpage.manpage import Manpage

    from manifesto import __version__
    from manifesto.cli.parser import English, get_parser

    with English():  # argparse's strings as the CLI prints them, also when called outside main
        parser = get_parser()
        # DESCRIPTION says it at length; argparse-manpage would append the one-line --help
        # description to it as a sentence of its own.
        parser.description = None
        page = Manpage(parser, format="single-commands-section", _data={
            "project_name": "llm-manifesto", "version": __version__, "manual_title": "llm-manifesto manual",
            "date": _date(os.environ if env is None else env),
            "description": "render vLLM and llm-d deployments as Kubernetes YAML or Slurm batch scripts"})
        for heading, text in (("description", _DESCRIPTION), ("environment", _ENVIRONMENT), ("files", _FILES),
                              ("exit status", _EXIT_STATUS), ("examples", _EXAMPLES), ("see also", _SEE_ALSO)):
            page.add_section(heading, "=", text.strip())
        return _wrap(str(page))


def _man(args) -> int:
    import sys

    sys.stdout.write(manpage())
    return 0
