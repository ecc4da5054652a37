#!/usr/bin/python3
# Fake four-letter peers for bench/many_peers.sh: COUNT servers on 127.0.0.1 (ports the kernel
# picks), answering srvr as a 3.8 follower (the first as the leader) and every other word as a
# server whose whitelist refuses it. Prints the --servers list on one line, then serves until
# stdin closes.
#   bench/fake_peers.py COUNT
import asyncio
import sys

SRVR = ("Zookeeper version: 3.8.0-fake, built on 2024-12-29 17:54 UTC\nLatency min/avg/max: 0/0.0/0\n"
        "Received: 1\nSent: 1\nConnections: 1\nOutstanding: 0\nZxid: 0x100000007\nMode: {mode}\nNode count: 5\n")


def handler(mode):
    async def serve(reader, writer):
        try:
            word = (await reader.readexactly(4)).decode("ascii", "replace")
            if word == "srvr":
                writer.write(SRVR.format(mode=mode).encode())
            else:
                writer.write(f"{word} is not executed because it is not in the whitelist.\n".encode())
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()
    return serve


async def main(count):
    servers = [await asyncio.start_server(handler("leader" if i == 0 else "follower"), "127.0.0.1", 0, backlog=64)
               for i in range(count)]
    ports = [server.sockets[0].getsockname()[1] for server in servers]
    print(",".join(f"fake-{i}=127.0.0.1:{port}" for i, port in enumerate(ports)), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until stdin closes


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
