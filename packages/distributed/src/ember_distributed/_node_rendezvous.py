"""The launchers' rendezvous (torchrun's ``c10d`` backend): which nodes run the job, and their ranks.

With ``--rdzv-backend c10d --rdzv-endpoint host:port`` the launchers do not need
``--node-rank``: they meet on a TCPStore at the endpoint. The launcher on the endpoint's
machine serves it (when the port is taken, another launcher of that machine already
does, and this one is a client, as torchrun's). Each launcher takes a number
(``add("joined", 1)``) and publishes its node (processes, address, a free port). The
rendezvous closes when ``MAX`` nodes have joined, or ``last_call_timeout`` seconds (30 by
default) after ``MIN`` had; the first launcher to see either writes the final count with
``compare_set``, so that every launcher reads the same membership. Nodes take ranks in
the order they joined; global ranks follow, node by node, so nodes may run different
numbers of processes. The workers then meet on the first node's address and port.

What torchrun does and ember does not: a node that comes after the close is refused
(torchrun keeps it waiting for the next round; ember's jobs across nodes do not restart,
so there is no next round), and the membership is fixed for the job's life. The keys
live under ``ember-run/<rdzv-id>/``: a store that outlives its job (an external one) needs
a new ``--rdzv-id`` for each job, or the next one finds the rendezvous closed.
"""

import datetime
import errno
import json
import socket
import time

from collections import namedtuple

from ._errors import DistError
from ._store import PrefixStore, TCPStore

__all__ = ["Placement", "static_placement", "node_rendezvous", "parse_rdzv_conf", "DEFAULT_RDZV_PORT"]

DEFAULT_RDZV_PORT = 29400  # torchrun's, for an endpoint given without a port

Placement = namedtuple("Placement", "node_rank nnodes rank_offset world_size master_addr master_port")
Placement.__doc__ = """Where this node's workers sit in the job: its node rank among ``nnodes``, its
first global rank, the job's world size, and the address where the workers meet."""


def static_placement(node_rank, nnodes, nproc, master_addr, master_port):
    """The placement of torchrun's static rendezvous: every node runs ``nproc`` workers."""
    return Placement(node_rank, nnodes, node_rank * nproc, nnodes * nproc, master_addr, master_port)


def parse_rdzv_conf(text):
    """``--rdzv-conf key1=value1,key2=value2`` as a dict of strings, as torchrun reads it.

    >>> parse_rdzv_conf("join_timeout=60, last_call_timeout=5")
    {'join_timeout': '60', 'last_call_timeout': '5'}
    """
    conf = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, _, value = item.partition("=")
        if not key.strip():
            raise ValueError("The rendezvous configuration string must be in format "
                             "<key1>=<value1>,...,<keyN>=<valueN>.")
        conf[key.strip()] = value.strip()
    return conf


def node_rendezvous(host, port, run_id, min_nodes, max_nodes, nproc, join_timeout=600.0, last_call=30.0,
                    local_addr=None, poll=0.05):
    """Meet the other launchers at ``host:port``; this node's ``Placement``.

    Args:
        run_id: the job's ``--rdzv-id``: launchers of different jobs on one store do not meet.
        min_nodes, max_nodes: ``--nnodes MIN:MAX``.
        nproc: this node's number of workers.
        join_timeout: seconds within which ``min_nodes`` must have joined.
        last_call: seconds to wait for more nodes once ``min_nodes`` have joined.
        local_addr: this node's address for the workers of other nodes (``--local-addr``).

    Raises SystemExit, saying why, when the rendezvous times out, closed before this node
    joined, or its store cannot be reached.
    """
    here = _is_local_address(host)
    try:
        store, serving = _open_store(host, port, here, join_timeout)
        keys = PrefixStore(f"ember-run/{run_id}", store)
        index = keys.add("joined", 1) - 1
        # The endpoint is reachable from every node: when it is on this machine, it is this node's address.
        address = local_addr or (host if here else socket.getfqdn())
        keys.set(f"node/{index}", json.dumps({"nproc": nproc, "addr": address, "port": _free_port()}))
        nnodes = _close(keys, min_nodes, max_nodes, join_timeout, last_call, poll)
        if index < nnodes:
            nodes = [json.loads(keys.get(f"node/{i}")) for i in range(nnodes)]
            keys.add("read", 1)
        if serving:
            # The others read their placement from this process: let them, before it may exit.
            _wait_for_readers(keys, nnodes, poll)
    except (DistError, OSError) as error:  # the store lost, or its port not ours to serve
        raise SystemExit(f"ember-run: the rendezvous at {host}:{port} failed: {error}") from None
    if index >= nnodes:
        raise SystemExit(f"ember-run: the rendezvous '{run_id}' at {host}:{port} closed with {nnodes} "
                         f"node(s) before this node joined (--nnodes {min_nodes}:{max_nodes}); ember-run "
                         f"does not add nodes to a running job")
    offset = sum(node["nproc"] for node in nodes[:index])
    world_size = sum(node["nproc"] for node in nodes)
    return Placement(index, nnodes, offset, world_size, nodes[0]["addr"], nodes[0]["port"])


def _close(keys, min_nodes, max_nodes, join_timeout, last_call, poll):
    """The number of nodes the rendezvous closed with (this launcher may be the one to close it)."""
    started = time.monotonic()
    enough_since = None
    while True:
        if keys.check(["closed"]):
            return int(keys.get("closed"))
        joined = keys.add("joined", 0)
        now = time.monotonic()
        decided = None
        if joined >= max_nodes:
            decided = max_nodes
        elif joined >= min_nodes:
            enough_since = now if enough_since is None else enough_since
            if now - enough_since >= last_call:
                decided = joined
        elif now - started > join_timeout:
            raise SystemExit(f"ember-run: the rendezvous timed out after {join_timeout:g} s: {joined} of the "
                             f"{min_nodes} nodes needed (--nnodes {min_nodes}:{max_nodes}) joined; more time: "
                             f"--rdzv-conf join_timeout=SECONDS")
        if decided is not None:
            # compare_set answers the count that won, ours or another launcher's.
            return int(keys.compare_set("closed", "", str(decided)))
        time.sleep(poll)


def _wait_for_readers(keys, nnodes, poll, seconds=60.0):
    deadline = time.monotonic() + seconds
    while keys.add("read", 0) < nnodes and time.monotonic() < deadline:
        time.sleep(poll)


def _open_store(host, port, here, join_timeout):
    """(store, whether this process serves it): serve when the endpoint is on this machine
    and its port is free; otherwise be a client, retrying until the server is up."""
    timeout = datetime.timedelta(seconds=join_timeout)
    if here:
        try:
            return TCPStore(host, port, is_master=True, timeout=timeout, wait_for_workers=False), True
        except OSError as error:
            if error.errno != errno.EADDRINUSE:
                raise
    return TCPStore(host, port, is_master=False, timeout=timeout), False


def _is_local_address(host):
    """True when ``host`` names this machine (it can bind a socket to it)."""
    try:
        addresses = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        return False
    for family, _, _, _, address in addresses:
        try:
            with socket.socket(family, socket.SOCK_STREAM) as probe:
                probe.bind((address[0], 0))
            return True
        except OSError:
            continue
    return False


def _free_port():
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]

