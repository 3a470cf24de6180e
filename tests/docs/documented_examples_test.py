#!/usr/bin/env python3
"""Runs every command example of the documentation against real servers.

Usage: documented_examples_test.py SOURCE_DIR BUILD_DIR [--list]

The examples are the lines of ```sh blocks in README.md, docs/*.md, monitor/README.md and
packaging/**/README.md, and the EXAMPLES of the man pages (packaging/man/*.h2m), that start
with kvdrive, kvmon, sqlite3 or curl (continued over trailing backslashes and open quotes).
Each source's examples run in order, in a directory of their own, as a reader would type
them, against a redis-server and a memcached this test starts on free loopback ports, with
kvdrive and kvmon of BUILD_DIR first on PATH. What a reader's machine has and a test's does
not is rewritten, and only that:
  - stores: redis://127.0.0.1:PORT, redis://localhost -> the test's Redis; memcached://... ->
    its memcached; kvmon's --port 6379 / 11211 and $(pidof ...) / $(pgrep -n ...) -> the
    test's servers; /etc/kvmon/token -> a token file the test makes; a listening address's
    host (10.0.0.5, 0.0.0.0) -> 127.0.0.1 and its port -> a free one;
  - sizes and durations: --keys at most 2000, --duration 1s, --threads at most 2,
    --connections at most 8, --scale 0.002 (and a --scenario run gets it), --keys 2000 for a
    run that gives no --keys (nor a scenario, trace or memtier key range), a --search at most
    3 steps, --start-at +1s, --repeat at most 4 (the fewest rounds with which compare's 95 %
    interval exists), gen-trace --requests at most 20000.
A kvmon command (with or without '&') is a daemon: it runs in the background for the rest of
its source's examples and must still be running at the end. Every other command must exit 0.
An example that needs what a test cannot make (other hosts, swap, Kubernetes, root) says so
where it stands, with a '# needs ...' comment on its line (or on a line of its own: the rest of
its block): it is listed, not run. A command with '...'
in it (an elided one) must say so. scripts/ lines are the README's own two commands (CI runs
the test one; the demo is run by hand) and are not examples here.
Exit status: 0 all ran; 1 one failed; 77 redis-server or memcached is missing (skipped),
unless KV_REQUIRE_SERVERS=1.
"""
import glob
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

COMMANDS = ("kvdrive", "kvmon", "sqlite3", "curl", "cat")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sources(root):
    names = ["README.md"] + sorted(glob.glob("docs/*.md", root_dir=root))
    names += ["monitor/README.md"] + sorted(glob.glob("packaging/**/README.md", root_dir=root,
                                                       recursive=True))
    names += sorted(glob.glob("packaging/man/*.h2m", root_dir=root))
    return [n for n in names if os.path.exists(os.path.join(root, n))]


def unbalanced(text):
    """True while a quote opened in `text` is not closed (a command continues on the next line)."""
    quote = None
    i = 0
    while i < len(text):
        c = text[i]
        if quote is None and c == "\\":
            i += 2
            continue
        if quote is None and c in "'\"":
            quote = c
        elif c == quote:
            quote = None
        i += 1
    return quote is not None


def blocks(path):
    """The example lines of one source: markdown ```sh blocks, or a man page's EXAMPLES."""
    text = open(path, encoding="utf-8").read()
    if path.endswith(".h2m"):
        m = re.search(r"^\[EXAMPLES\]\n\.nf\n(.*?)^\.fi", text, re.S | re.M)
        if not m:
            return []
        body = m.group(1).replace("\\-", "-").replace("\\e", "\\")
        return [body.split("\n")]
    return [b.split("\n") for b in re.findall(r"^```(?:sh|bash|shell)\n(.*?)^```", text,
                                               re.S | re.M)]


def commands(path):
    out = []
    for lines in blocks(path):
        i = 0
        block_needs = ""  # a '# needs ...' line of its own marks the rest of its block
        while i < len(lines):
            line = lines[i]
            i += 1
            if re.match(r"\s*#\s*needs\b", line):
                block_needs = "  " + line.strip()
                continue
            if not re.match(r"\s*(%s)\b" % "|".join(COMMANDS), line):
                continue
            cmd = line
            heredoc = re.search(r"<<-?\s*'?(\w+)'?", line)
            if heredoc:  # a file the next examples use: its lines up to the terminator
                while i < len(lines) and lines[i - 1].strip() != heredoc.group(1):
                    cmd += "\n" + lines[i]
                    i += 1
                out.append(cmd)
                continue
            while (cmd.rstrip().endswith("\\") or unbalanced(cmd)) and i < len(lines):
                cmd = (cmd.rstrip()[:-1] if cmd.rstrip().endswith("\\") else cmd + "\n") + \
                    lines[i]
                i += 1
            if not line.lstrip().startswith("cat"):
                out.append(cmd.strip() + (block_needs if needs(cmd) is None else ""))
    return out


def needs(cmd):
    m = re.search(r"#\s*needs\b(.*)$", cmd)
    return m.group(0).lstrip("# ").strip() if m else None


class Rewriter:
    def __init__(self, env):
        self.env = env  # redis_port, mc_port, redis_pid, mc_pid, token, queries

    def __call__(self, cmd):
        e = self.env
        # Comments go (after the needs check); shell syntax stays.
        if "<<" not in cmd:
            cmd = re.sub(r"\s+#[^'\"\n]*$", "", cmd)
        # "db" is the examples' database host.
        cmd = re.sub(r"redis://(127\.0\.0\.1|localhost|db)(:\d+)?",
                     f"redis://127.0.0.1:{e['redis_port']}", cmd)
        cmd = re.sub(r"memcached://(127\.0\.0\.1|localhost)(:\d+)?",
                     f"memcached://127.0.0.1:{e['mc_port']}", cmd)
        for name, pid in (("redis-server", e["redis_pid"]), ("memcached", e["mc_pid"])):
            cmd = re.sub(r"\$\((pidof|pgrep -n) %s\)" % name, str(pid), cmd)
        if re.match(r"kvmon\b", cmd):
            cmd = re.sub(r"--port 6379\b", f"--port {e['redis_port']}", cmd)
            cmd = re.sub(r"--port 11211\b", f"--port {e['mc_port']}", cmd)
        cmd = cmd.replace("/etc/kvmon/token", e["token"])
        cmd = cmd.replace("/var/lib/kvmon/", "")
        cmd = cmd.replace("results/results.db", "results.db")
        cmd = cmd.replace("< schema/queries/", "< " + e["queries"] + "/")
        # Listening addresses: loopback, a free port; what else names that port follows.
        for addr in re.findall(r"--(?:listen|metrics) (\S+:\d+)", cmd):
            port = addr.rsplit(":", 1)[1]
            new = e["ports"].setdefault(port, free_port())
            cmd = cmd.replace(addr, f"127.0.0.1:{new}")
        for port, new in e["ports"].items():
            cmd = re.sub(r"(127\.0\.0\.1|localhost|10\.0\.0\.5|0\.0\.0\.0):%s\b" % port,
                         f"127.0.0.1:{new}", cmd)
        if re.match(r"kvdrive\b", cmd):
            cmd = re.sub(r"--keys (\S+)", lambda m: "--keys " + min_size(m.group(1), 2000), cmd)
            cmd = re.sub(r"--(duration|test-time) \S+", r"--\1 1s", cmd)
            cmd = re.sub(r"--threads (\d+)", lambda m: f"--threads {min(int(m.group(1)), 2)}", cmd)
            cmd = re.sub(r"--connections (\d+)",
                         lambda m: f"--connections {min(int(m.group(1)), 8)}", cmd)
            cmd = re.sub(r"--start-at \+\S+", "--start-at +1s", cmd)
            if (re.match(r"kvdrive run\b", cmd) and "--keys" not in cmd
                    and not re.search(r"--(scenario|trace|key-maximum|config)\b| -s ", cmd)):
                cmd = cmd.replace("kvdrive run", "kvdrive run --keys 2000", 1)  # not 100k
            cmd = re.sub(r"--repeat (\d+)", lambda m: f"--repeat {min(int(m.group(1)), 4)}", cmd)
            if re.match(r"kvdrive gen-trace\b", cmd):
                cmd = re.sub(r"--requests (\S+)",
                             lambda m: "--requests " + min_size(m.group(1), 20000), cmd)
            cmd = re.sub(r"--scale \S+", "--scale 0.002", cmd)
            if "--scenario" in cmd and "--scale" not in cmd:
                cmd += " --scale 0.002"
            if re.search(r"--search\b", cmd) and "--search-steps" not in cmd and "--rates" not in cmd:
                cmd += " --search-steps 3"
        return cmd


def min_size(text, limit):
    m = re.fullmatch(r"(\d+)([kKmM]?)", text)
    if not m:
        return text
    n = int(m.group(1)) * {"": 1, "k": 1000, "K": 1000, "m": 10**6, "M": 10**6}[m.group(2)]
    return str(min(n, limit))


def start_servers(work):
    redis_port, mc_port = free_port(), free_port()
    redis = subprocess.Popen(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1",
                              "--save", "", "--appendonly", "no", "--dir", work],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # -I 4m: the value-size-sweep scenario's 1 MB and 2 MB values (docs/reference.md says so).
    mc = subprocess.Popen(["memcached", "-p", str(mc_port), "-l", "127.0.0.1", "-U", "0", "-I", "4m"]
                          + (["-u", "root"] if os.geteuid() == 0 else []),
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for port in (redis_port, mc_port):
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError(f"no server on port {port}")
    return redis, mc, redis_port, mc_port


def main():
    root, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    listing = "--list" in sys.argv[3:]
    if not listing and (shutil.which("redis-server") is None or shutil.which("memcached") is None):
        if os.environ.get("KV_REQUIRE_SERVERS") == "1":
            print("FAILED: redis-server or memcached missing (KV_REQUIRE_SERVERS=1)")
            return 1
        print("skipped: redis-server or memcached missing")
        return 77
    top = tempfile.mkdtemp(prefix="kvbench-examples-")
    env = dict(os.environ)
    env["PATH"] = f"{build}/driver:{build}/monitor:" + env["PATH"]
    env.pop("COLUMNS", None)
    servers = []
    ran = failed = 0
    not_run = []
    try:
        if not listing:
            redis, mc, redis_port, mc_port = start_servers(top)
            servers = [redis, mc]
        else:
            redis_port = mc_port = 0
            redis = mc = None
        token = os.path.join(top, "token")
        with open(token, "w") as f:
            f.write("examples-" + os.urandom(16).hex() + "\n")
        os.chmod(token, 0o600)
        for source in sources(root):
            cmds = commands(os.path.join(root, source))
            if not cmds:
                continue
            work = tempfile.mkdtemp(prefix=re.sub(r"\W", "_", source) + "-", dir=top)
            rewrite = Rewriter({"redis_port": redis_port, "mc_port": mc_port,
                                "redis_pid": redis.pid if redis else 0,
                                "mc_pid": mc.pid if mc else 0, "token": token,
                                "queries": os.path.join(root, "schema/queries"), "ports": {}})
            daemons = []
            for original in cmds:
                why = needs(original)
                if why is None and "..." in original:
                    print(f"FAILED: {source}: an elided command says nothing of what it needs:"
                          f"\n    {original}")
                    failed += 1
                    continue
                if why is not None:
                    not_run.append(f"{source}: {original.splitlines()[0][:100]} ({why})")
                    continue
                cmd = rewrite(original)
                remote = re.search(r"(redis|rediss|memcached|redis\+cluster)://(?!127\.0\.0\.1)"
                                   r"[^\s/'\"]+", cmd)
                if remote:
                    print(f"FAILED: {source}: names a store this test cannot reach "
                          f"({remote.group(0)}) without a '# needs' mark:\n    {original}")
                    failed += 1
                    continue
                if listing:
                    print(f"{source}: {cmd}")
                    continue
                daemon = re.match(r"kvmon\b", cmd) is not None
                cmd = re.sub(r"\s*&\s*$", "", cmd)
                log = open(os.path.join(work, f"example-{ran + failed}.log"), "w+")
                if daemon:
                    # One kvmon at a time, as a reader runs them: the one before is stopped.
                    failed += stop_daemons(source, daemons)
                    daemons = []
                    p = subprocess.Popen(["bash", "-c", "exec " + cmd], cwd=work, env=env,
                                         stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)
                    daemons.append((original, cmd, p, log))
                    time.sleep(1.0)  # listening and sampling before the next example
                    if p.poll() is not None:
                        failed += 1
                        log.seek(0)
                        print(f"FAILED: {source}: the daemon exited {p.returncode} at start:\n"
                              f"    {original}\n    ran: {cmd}\n" + indent(log.read()))
                    else:
                        ran += 1
                    continue
                try:
                    code = subprocess.run(["bash", "-c", "set -o pipefail; " + cmd], cwd=work,
                                          env=env, stdout=log, stderr=subprocess.STDOUT,
                                          timeout=240).returncode
                except subprocess.TimeoutExpired:
                    code = "timeout (240 s)"
                if code == 0:
                    ran += 1
                    print(f"ok: {source}: {original.splitlines()[0][:100]}")
                else:
                    failed += 1
                    log.seek(0)
                    print(f"FAILED: {source}: exit {code}:\n    {original}\n    ran: {cmd}\n"
                          + indent(log.read()))
            failed += stop_daemons(source, daemons)
    finally:
        for s in servers:
            s.terminate()
            s.wait()
        shutil.rmtree(top, ignore_errors=True)
    for n in not_run:
        print(f"not run (marked): {n}")
    print(f"{ran} examples ran, {failed} failed, {len(not_run)} marked as needing what a "
          "test cannot make")
    return 1 if failed else 0


def stop_daemons(source, daemons):
    """Stops the daemons; the number that had exited by then (each a failure, printed)."""
    failed = 0
    for original, cmd, p, log in daemons:
        if p.poll() is not None:
            failed += 1
            log.seek(0)
            print(f"FAILED: {source}: the daemon exited {p.returncode} before it was stopped:"
                  f"\n    {original}\n    ran: {cmd}\n" + indent(log.read()))
            continue
        os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        print(f"ok: {source}: {original.splitlines()[0][:100]} (ran as a daemon)")
    return failed


def indent(text, limit=25):
    lines = text.rstrip("\n").split("\n")[-limit:]
    return "".join("      " + l + "\n" for l in lines)


if __name__ == "__main__":
    sys.exit(main())
