"""A hostile adapter for the harness's own tests: a proxy in front of a real adapter
(a store adapter or a kernel adapter) that misbehaves on purpose.

    python3 hostile.py MODE N -- REAL COMMAND...

Requests are forwarded to the real adapter and its answers back, except that request
number N (0 is `hello`, 1 the first request after it) meets MODE. Every start appends
"pid pgid" to $LOOM_TEST_PIDFILE, and each misbehaviour appends "MODE id=ID" to
$LOOM_TEST_EVENTS, so a test can find every process it must see gone and the request
that should be blamed. With $LOOM_TEST_ONCE set to a path, only the first process
misbehaves (it creates the file; later processes find it and behave).
"""
import json, os, signal, subprocess, sys, time

mode, n = sys.argv[1], int(sys.argv[2])
real = sys.argv[sys.argv.index("--") + 1:]

def note(path_var, text):
    path = os.environ.get(path_var)
    if path:
        with open(path, "a") as f:
            f.write(text + "\n")

note("LOOM_TEST_PIDFILE", f"{os.getpid()} {os.getpgid(0)}")
once = os.environ.get("LOOM_TEST_ONCE")
if once:
    # Misbehave in the first process only; its restarted successors behave.
    if os.path.exists(once):
        mode = "good"
    else:
        open(once, "w").close()
sys.stderr.write(f"hostile proxy {os.getpid()}: mode {mode} at request {n}\n")
sys.stderr.flush()

if mode == "grandchild":
    # A helper that holds stdout open and stays in the group.
    subprocess.Popen(["sleep", "1000"])
if mode == "ignore-term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

child = subprocess.Popen(real, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

def out(text):
    sys.stdout.write(text)
    sys.stdout.flush()

def forward(line):
    child.stdin.write(line)
    child.stdin.flush()
    return child.stdout.readline()

count = -1
for line in sys.stdin:
    count += 1
    req = json.loads(line)
    if count == 0 and mode == "wrong-major":
        answer = json.loads(forward(line))
        answer["result"]["protocolVersion"] = 99 if isinstance(answer["result"].get("protocolVersion"), int) else "99.0"
        out(json.dumps(answer) + "\n")
        continue
    if count == 0 and mode == "hello-no-newline":
        out(forward(line).rstrip("\n"))
        time.sleep(1000)
    if mode == "crash-on-ingress" and req.get("method") == "ingress":
        # Every ingress request, in every process: a traceback on stderr, then exit.
        sys.stderr.write("Traceback (most recent call last):\nValueError: hostile proxy crashing on ingress\n")
        sys.stderr.flush()
        sys.exit(3)
    if count != n:
        out(forward(line))
        continue
    if mode != "good":
        note("LOOM_TEST_EVENTS", f"{mode} id={req['id']}")
    if mode in ("hang", "hang-hello", "ignore-term"):
        time.sleep(1000)
    answer = forward(line)
    if mode == "twice":
        out(answer + answer)
    elif mode == "late":
        time.sleep(float(os.environ.get("LOOM_TEST_LATE_S", "3")))
        out(answer)
    elif mode == "non-json":
        out("<html>this is not json</html>\n")
    elif mode == "partial-exit":
        out(answer[: len(answer) // 2])
        sys.exit(3)
    elif mode == "exit-after-hello":
        # Answer, then exit as if the session were over; the next request finds it gone.
        out(answer)
        sys.exit(0)
    elif mode == "huge":
        size = int(os.environ.get("LOOM_TEST_HUGE_BYTES", "70000000"))
        out('{"id": %d, "result": "%s"}\n' % (req["id"], "x" * size))
    else:
        out(answer)

child.stdin.close()
if mode == "ignore-eof":
    time.sleep(1000)
child.wait()
