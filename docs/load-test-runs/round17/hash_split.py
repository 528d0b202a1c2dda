"""How nginx's former routing (a consistent hash of a random id per new browser, profiling/deploy.py at e6f3484)
splits 40 new browsers over 2 processes: STARTS fresh nginx starts, 40 cookie-less first requests each, counted by
the stand-in process that answered. Run from the checkout's root: python docs/load-test-runs/round17/hash_split.py 100
"""

from __future__ import annotations

import http.server
import importlib.util
import json
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path


def main(starts: int) -> dict:
    work = Path(tempfile.mkdtemp(prefix="hash-split-"))
    old = work / "deploy_hash.py"
    old.write_text(
        subprocess.run(
            ["git", "show", "e6f3484:profiling/deploy.py"], capture_output=True, text=True, check=True
        ).stdout
    )
    sys.path.insert(0, str(Path.cwd()))
    sys.path.insert(0, str(Path.cwd() / "scripts"))
    from load_test import NamesItsPort

    spec = importlib.util.spec_from_file_location("deploy_hash", old)
    deploy = importlib.util.module_from_spec(spec)
    sys.modules["deploy_hash"] = deploy
    spec.loader.exec_module(deploy)
    ports = (18521, 18522)
    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", p), NamesItsPort) for p in ports]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    larger = []
    for trial in range(starts):
        run = work / f"nginx{trial}"
        run.mkdir()
        (run / "nginx.conf").write_text(deploy.nginx_config([f"127.0.0.1:{p}" for p in ports], "127.0.0.1:18520", run))
        proxy = subprocess.Popen(
            [deploy.NGINX, "-p", str(run), "-e", str(run / "error.log"), "-c", str(run / "nginx.conf")]
            + ["-g", "daemon off;"]
        )
        time.sleep(0.3)
        first = [urllib.request.urlopen("http://127.0.0.1:18520/").read().decode() for _ in range(40)]
        larger.append(max(first.count(str(p)) for p in ports))
        proxy.terminate()
        proxy.wait()
    return {"browsers": 40, "starts": starts, "larger_share": larger}


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)))
