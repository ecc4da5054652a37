#!/usr/bin/python3
# The benchmark's anchor: what a Python client does to check an ensemble, with Debian's
# python3-kazoo (hence /usr/bin/python3: another python3 on PATH may lack it). Less than zkverify
# quorum does: for each server in turn, open a session pinned to it, create one ephemeral-sequential
# znode, sync, read it back, close the session (which removes the node). The znodes go under one
# parent, /kazoo-bench: ZooKeeper 3.8 keeps read and write metrics per top-level znode, so a new
# top-level name per run would grow every server's `mntr` by five lines a run (to 660 KB after a
# few thousand runs, each `mntr` then taking 12 ms) and slow down whatever asks it next.
#   bench/kazoo_round_trip.py NAME=HOST:PORT,...     (zklab servers' output; NAME= is optional)
import logging
import sys

from kazoo.client import KazooClient


def check(host_port):
    client = KazooClient(hosts=host_port, timeout=10.0, connection_retry=None)
    client.start(timeout=5)
    try:
        path = client.create("/kazoo-bench/n-", b"kazoo", ephemeral=True, sequence=True, makepath=True)
        client.sync(path)
        data, _ = client.get(path)
        if data != b"kazoo":
            sys.exit(f"{host_port}: read back {data!r}")
    finally:
        client.stop()
        client.close()


def main():
    logging.basicConfig(level=logging.ERROR)
    for entry in sys.argv[1].split(","):
        check(entry.split("=", 1)[-1])


if __name__ == "__main__":
    main()
