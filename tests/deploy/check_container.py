#!/usr/bin/env python3
"""Checks docker/Dockerfile and docker/compose.yaml without a Docker engine.

Dockerfile: every file it copies exists; its build stage runs the scripts CI runs
(scripts/setup.sh, scripts/build.sh, reached from .ci/run through scripts/test.sh); its runtime
packages cover every shared library of the built binary (ldd, then dpkg -S); the user, port,
stop signal, config path and plugin directory are the ones the rest of the project names; the
HEALTHCHECK command passes on a 200 from /healthz and fails on a 503 or a closed port.

compose.yaml: it loads as YAML; every local file or folder it mounts or builds from exists; the
services it depends on are defined; docker/config.toml is a valid config (`exactly validate`)
that points at the Kafka service; Prometheus loads the alert rules and scrapes the service;
Grafana is provisioned with the dashboard and a Prometheus data source.

  check_container.py --source REPO --binary build/app/exactly
"""

import argparse
import http.server
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import threading
from pathlib import Path

import yaml

problems: list[str] = []


def problem(message: str) -> None:
    problems.append(message)


# --- Dockerfile ---------------------------------------------------------------------------------


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped."""
    result, pending = [], ""
    for line in text.splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if stripped.startswith("#"):
            continue  # a comment inside a continued instruction
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        full = pending + stripped
        pending = ""
        word, _, rest = full.partition(" ")
        result.append((word.upper(), rest.strip()))
    return result


def stages(steps: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    out: list[list[tuple[str, str]]] = []
    for step in steps:
        if step[0] == "FROM":
            out.append([])
        if not out:
            problem("Dockerfile: an instruction before the first FROM")
            continue
        out[-1].append(step)
    return out


def copy_sources(args: str) -> tuple[list[str], list[str], str]:
    """(flags, sources, destination) of a COPY in shell form."""
    words = shlex.split(args)
    flags = [w for w in words if w.startswith("--")]
    paths = [w for w in words if not w.startswith("--")]
    return flags, paths[:-1], paths[-1]


def apt_packages(run: str) -> list[str]:
    match = re.search(r"apt-get install ([^&;]*)", run)
    if not match:
        return []
    return [w for w in match.group(1).split() if not w.startswith("-")]


def shared_libraries(binary: Path) -> list[Path]:
    out = subprocess.run(["ldd", str(binary)], check=True, capture_output=True, text=True).stdout
    libs = []
    for line in out.splitlines():
        match = re.search(r"=>\s+(\S+)\s+\(", line)
        if match:
            libs.append(Path(match.group(1)))
    return libs


def package_of(library: Path) -> str | None:
    """The Debian package holding a library, trying the path as ldd gave it, resolved, and its
    /usr twin (Debian 12 has merged /usr, and dpkg knows one spelling)."""
    candidates = [library, library.resolve()]
    for c in list(candidates):
        text = str(c)
        candidates.append(Path("/usr" + text) if not text.startswith("/usr/") else Path(text[4:]))
    for c in candidates:
        out = subprocess.run(["dpkg", "-S", str(c)], capture_output=True, text=True)
        if out.returncode == 0:
            return out.stdout.split(":")[0].strip()
    return None


def installed(package: str) -> bool:
    out = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package],
                         capture_output=True, text=True)
    return out.returncode == 0 and "install ok installed" in out.stdout


def depends_closure(packages: list[str]) -> set[str]:
    """Every package the given ones pull in through Depends and Pre-Depends, as installed here."""
    seen, todo = set(), list(packages)
    while todo:
        package = todo.pop()
        if package in seen:
            continue
        seen.add(package)
        out = subprocess.run(["dpkg-query", "-W", "-f=${Depends}, ${Pre-Depends}", package],
                             capture_output=True, text=True)
        for clause in out.stdout.split(","):
            # "libssl3 (>= 3.0.0)" or "a | b": an alternative installed here is the one used.
            for alternative in clause.split("|"):
                name = alternative.strip().split(" ")[0].split(":")[0]
                if name and installed(name):
                    todo.append(name)
                    break
    return seen


# In debian:bookworm-slim already (the toolchain's runtime), so the image need not install them.
BASE_PACKAGES = {"libc6", "libstdc++6", "libgcc-s1"}
# Linked only into a -DEXACTLY_SANITIZE build (scripts/test.sh's second pass); the image is not.
SANITIZER_LIBRARY = re.compile(r"lib(asan|ubsan|tsan|lsan|hwasan)\.so")
# Runtime packages that hold no library of the binary, and why the image has them.
NON_LIBRARY_PACKAGES = {"ca-certificates"}  # the brokers' TLS certificates


# The container's build links jemalloc (-DEXACTLY_JEMALLOC=ON, the default); a sanitizer build
# does not, and then the Dockerfile's jemalloc package is not looked for in that binary.
JEMALLOC_PACKAGE = "libjemalloc2"


def check_runtime_packages(listed: list[str], binary: Path, without_jemalloc: bool) -> None:
    for package in listed:
        if not installed(package):
            problem(f"Dockerfile: runtime package '{package}' is not installed on this Debian 12 "
                    "build machine: a wrong name, or a version the build does not use")
    covered = depends_closure(listed) | BASE_PACKAGES
    used = set()
    for library in shared_libraries(binary):
        if SANITIZER_LIBRARY.search(library.name):
            continue
        package = package_of(library)
        if package is None:
            problem(f"Dockerfile: {binary.name} links {library}, which no Debian package holds")
            continue
        used.add(package)
        if package not in covered:
            problem(f"Dockerfile: {binary.name} links {library} from package '{package}', which "
                    "the runtime stage neither installs nor gets through its packages' Depends")
    for package in listed:
        if package in NON_LIBRARY_PACKAGES:
            continue
        if package == JEMALLOC_PACKAGE and without_jemalloc:
            continue
        if package not in used:
            problem(f"Dockerfile: runtime package '{package}' holds none of {binary.name}'s "
                    "libraries (left over?)")


class Probe(http.server.BaseHTTPRequestHandler):
    status = 200

    def do_GET(self):  # noqa: N802 (the name http.server calls)
        code = self.status if self.path == "/healthz" else 404
        try:
            self.send_response(code)
            self.end_headers()
            self.wfile.write(b"ok\n" if code == 200 else b"not ok\n")
        except ConnectionError:
            pass  # the probe hangs up once it has the status line

    def log_message(self, *args):
        pass


def run_probe(command: list[str], port: int) -> int:
    env = dict(os.environ, EXACTLY_HEALTH_PORT=str(port))
    return subprocess.run(command, env=env, timeout=10, capture_output=True).returncode


def check_healthcheck(args: str) -> None:
    match = re.match(r"((?:--\S+\s+)*)CMD\s+(\[.*\])$", args)
    if not match:
        problem("Dockerfile: HEALTHCHECK is not 'HEALTHCHECK [options] CMD [exec form]'")
        return
    command = json.loads(match.group(2))
    if not re.search(r"--timeout=\d", match.group(1)):
        problem("Dockerfile: HEALTHCHECK has no --timeout (a probe that hangs must be cut)")
    if command[0] in ("curl", "wget"):
        problem(f"Dockerfile: HEALTHCHECK uses {command[0]}, which debian:bookworm-slim lacks")
    for status, want in ((200, 0), (503, 1)):
        handler = type("Handler", (Probe,), {"status": status})
        server = http.server.HTTPServer(("127.0.0.1", 0), handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            code = run_probe(command, server.server_address[1])
        finally:
            server.shutdown()
            server.server_close()
        if (code == 0) != (want == 0):
            problem(f"Dockerfile: HEALTHCHECK exits {code} when /healthz answers {status}")
    # A port nobody listens on: take a free one and close it again.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    if run_probe(command, free) == 0:
        problem("Dockerfile: HEALTHCHECK passes when nothing listens")


def check_ci_scripts(root: Path, build_runs: str) -> None:
    """The build stage calls the scripts CI calls: .ci/run -> scripts/test.sh -> setup, build."""
    ci = (root / ".ci/run").read_text()
    if "scripts/test.sh" not in ci:
        problem(".ci/run no longer runs scripts/test.sh: update this check")
        return
    test_sh = (root / "scripts/test.sh").read_text()
    for script in ("scripts/setup.sh", "scripts/build.sh"):
        if script not in test_sh:
            problem(f"scripts/test.sh no longer runs {script}: update this check")
        if not re.search(rf"(^|[\s&;]){re.escape(script)}\b", build_runs):
            problem(f"Dockerfile: the build stage does not run {script}, which CI runs")
    for flag in re.findall(r"scripts/setup\.sh\s+(--[\w-]+)", build_runs):
        if flag not in (root / "scripts/setup.sh").read_text():
            problem(f"Dockerfile: scripts/setup.sh has no option {flag}")
    for option in re.findall(r"-D(EXACTLY_\w+)=", build_runs):
        if not re.search(rf"\b{option}\b", (root / "CMakeLists.txt").read_text()):
            problem(f"Dockerfile: CMakeLists.txt has no option {option}")


def check_dockerfile(root: Path, binary: Path, without_jemalloc: bool) -> None:
    path = root / "docker/Dockerfile"
    all_stages = stages(instructions(path.read_text()))
    if len(all_stages) < 2:
        problem("Dockerfile: expected a build stage and a runtime stage")
        return
    build, runtime = all_stages[0], all_stages[-1]
    for base in (build[0][1], runtime[0][1]):
        if not base.startswith("debian:bookworm"):
            problem(f"Dockerfile: stage FROM {base} is not Debian 12 (bookworm)")
    copied: list[str] = []
    for stage in all_stages:
        for word, args in stage:
            if word in ("ADD",):
                problem("Dockerfile: ADD fetches and unpacks; use COPY")
            if word != "COPY":
                continue
            flags, sources, _ = copy_sources(args)
            if any(f.startswith("--from") for f in flags):
                continue
            for source in sources:
                copied.append(source)
                if not (root / source).exists():
                    problem(f"Dockerfile: COPY {source}: no such file or folder in the repository")
    # The build stage runs scripts that must be copied before they run.
    build_runs = " && ".join(args for word, args in build if word == "RUN")
    for script in re.findall(r"scripts/[\w.-]+\.sh", build_runs):
        if not any(script == c or script.startswith(c.rstrip("/") + "/") for c in copied):
            problem(f"Dockerfile: the build stage runs {script} without copying it")
    check_ci_scripts(root, build_runs)
    # What CMakeLists.txt needs to configure with tests off: every add_subdirectory and the
    # configure_package_config_file input.
    cmake = (root / "CMakeLists.txt").read_text()
    needed = re.findall(r"add_subdirectory\((\w+)\)", cmake.split("if(EXACTLY_BUILD_TESTS)")[0])
    needed += re.findall(r"configure_package_config_file\(([\w/.]+)", cmake)
    for need in needed:
        if not any(need == c.rstrip("/") or need.startswith(c.rstrip("/") + "/") for c in copied):
            problem(f"Dockerfile: CMakeLists.txt needs {need}, which the build stage does not copy")

    runtime_runs = [args for word, args in runtime if word == "RUN"]
    listed = [p for run in runtime_runs for p in apt_packages(run)]
    if not listed:
        problem("Dockerfile: the runtime stage installs no packages")
    check_runtime_packages(listed, binary, without_jemalloc)

    settings = {word: args for word, args in runtime}
    user = settings.get("USER", "")
    if not re.fullmatch(r"[1-9]\d*(:\d+)?", user):
        problem(f"Dockerfile: USER '{user}' is not a numeric non-root user (runAsNonRoot needs one)")
    if "9464" not in settings.get("EXPOSE", "").split():
        problem("Dockerfile: EXPOSE 9464 missing (metrics.listen's default port)")
    if settings.get("STOPSIGNAL") != "SIGTERM":
        problem("Dockerfile: STOPSIGNAL SIGTERM missing (the service's clean shutdown)")
    cmd = json.loads(settings.get("CMD", "[]"))
    if cmd[:3] != ["run", "--config", "/etc/exactly/config.toml"]:
        problem(f"Dockerfile: CMD {cmd} does not run /etc/exactly/config.toml")
    example = (root / "config/exactly.example.toml").read_text()
    plugin_dir = re.search(r'plugin_dir = "([^"]+)"', example)
    if not plugin_dir or plugin_dir.group(1) not in " ".join(runtime_runs):
        problem("Dockerfile: the runtime stage does not create the example config's plugin_dir")
    if "HEALTHCHECK" not in settings:
        problem("Dockerfile: no HEALTHCHECK")
    else:
        check_healthcheck(settings["HEALTHCHECK"])
    dockerignore = root / ".dockerignore"
    if not dockerignore.exists() or "build/" not in dockerignore.read_text():
        problem(".dockerignore should keep build/ out of the build context")


# --- compose.yaml -------------------------------------------------------------------------------


def volume_sources(service: dict) -> list[tuple[str, str]]:
    """(host path, container path) of the service's bind mounts (short and long syntax)."""
    out = []
    for volume in service.get("volumes", []):
        if isinstance(volume, str):
            parts = volume.split(":")
            if len(parts) >= 2 and parts[0].startswith((".", "/")):
                out.append((parts[0], parts[1]))
        elif volume.get("type") == "bind":
            out.append((volume["source"], volume["target"]))
    return out


def check_compose(root: Path, binary: Path) -> None:
    here = root / "docker"
    compose = yaml.safe_load((here / "compose.yaml").read_text())
    services = compose.get("services", {})
    missing = [n for n in ("kafka", "exactly", "prometheus", "grafana") if n not in services]
    for name in missing:
        problem(f"compose.yaml: no '{name}' service")
    if missing:
        return
    mounts: dict[str, dict[str, Path]] = {}
    for name, service in services.items():
        for dependency in service.get("depends_on", {}):
            if dependency not in services:
                problem(f"compose.yaml: {name} depends on '{dependency}', which is not a service")
        build = service.get("build")
        if build:
            context = here / (build if isinstance(build, str) else build.get("context", "."))
            dockerfile = context / (build.get("dockerfile", "Dockerfile")
                                    if isinstance(build, dict) else "Dockerfile")
            if not dockerfile.resolve().samefile(root / "docker/Dockerfile"):
                problem(f"compose.yaml: {name} builds from {dockerfile}, not docker/Dockerfile")
        mounts[name] = {}
        for source, target in volume_sources(service):
            path = (here / source).resolve()
            mounts[name][target] = path
            if not path.exists():
                problem(f"compose.yaml: {name} mounts {source}, which does not exist")

    # The services that run `exactly` use the image that compose builds, and its config.
    exactly_image = services["exactly"].get("image")
    users = [n for n, s in services.items() if s.get("image") == exactly_image]
    if len(users) < 3:
        problem("compose.yaml: expected the service and the one-shot create-topics and "
                "produce-sample services on the same image")
    commands = [" ".join(map(str, services[n].get("command", []))) for n in users]
    for command in ("create-topics", "produce-sample", "run"):
        if not any(c.startswith(command) for c in commands):
            problem(f"compose.yaml: no service runs `exactly {command}`")
    for name in users:
        config = mounts[name].get("/etc/exactly/config.toml")
        if config is None or config != (here / "config.toml").resolve():
            problem(f"compose.yaml: {name} does not mount docker/config.toml at "
                    "/etc/exactly/config.toml")

    # docker/config.toml: valid, and it names the Kafka service.
    out = subprocess.run([str(binary), "validate", "--config", str(here / "config.toml")],
                         capture_output=True, text=True)
    if out.returncode != 0:
        problem(f"docker/config.toml is not a valid config:\n{out.stderr}")
    kafka_env = services["kafka"].get("environment", {})
    advertised = kafka_env.get("KAFKA_ADVERTISED_LISTENERS", "")
    servers = re.search(r'bootstrap_servers\s*=\s*"([^"]+)"', (here / "config.toml").read_text())
    if not servers or servers.group(1) not in advertised:
        problem(f"docker/config.toml's bootstrap_servers is not one of the Kafka service's "
                f"advertised listeners ({advertised})")

    # Prometheus: the rule file mounted where prometheus.yml loads it, the service scraped.
    prometheus_mounts = mounts["prometheus"]
    rules = root / "config/prometheus/exactly-rules.yaml"
    config_target = next((t for t, p in prometheus_mounts.items() if p.name == "prometheus.yml"),
                         None)
    rules_target = next((t for t, p in prometheus_mounts.items() if p == rules.resolve()), None)
    if config_target is None or rules_target is None:
        problem("compose.yaml: prometheus mounts no prometheus.yml or no "
                "config/prometheus/exactly-rules.yaml")
    else:
        prometheus = yaml.safe_load(prometheus_mounts[config_target].read_text())
        rule_files = prometheus.get("rule_files", [])
        if rules_target not in rule_files:
            problem(f"prometheus.yml: rule_files {rule_files} do not load {rules_target}")
        command = " ".join(services["prometheus"].get("command", []))
        if config_target not in command:
            problem(f"compose.yaml: prometheus is not started with --config.file={config_target}")
        targets = [t for job in prometheus.get("scrape_configs", [])
                   for sc in job.get("static_configs", []) for t in sc.get("targets", [])]
        if "exactly:9464" not in targets:
            problem(f"prometheus.yml: does not scrape exactly:9464 (targets {targets})")

    # Grafana: a Prometheus data source at the prometheus service, and the dashboard provisioned.
    grafana_mounts = mounts["grafana"]
    provisioning = grafana_mounts.get("/etc/grafana/provisioning")
    if provisioning is None:
        problem("compose.yaml: grafana does not mount docker/grafana/provisioning")
        return
    datasources = [d for f in sorted((provisioning / "datasources").glob("*.yaml"))
                   for d in yaml.safe_load(f.read_text()).get("datasources", [])]
    if not any(d.get("type") == "prometheus" and d.get("url") == "http://prometheus:9090"
               for d in datasources):
        problem("grafana provisioning: no Prometheus data source at http://prometheus:9090")
    providers = [p for f in sorted((provisioning / "dashboards").glob("*.yaml"))
                 for p in yaml.safe_load(f.read_text()).get("providers", [])]
    dashboard = (root / "config/grafana/exactly-dashboard.json").resolve()
    dashboard_target = next((t for t, p in grafana_mounts.items() if p == dashboard), None)
    paths = [p.get("options", {}).get("path", "") for p in providers]
    if dashboard_target is None or not any(
            dashboard_target == path or dashboard_target.startswith(path.rstrip("/") + "/")
            for path in paths):
        problem(f"grafana provisioning: the dashboard is mounted at {dashboard_target}, outside "
                f"the dashboard providers' paths {paths}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, required=True, help="the repository")
    parser.add_argument("--binary", type=Path, required=True, help="the built exactly binary")
    parser.add_argument("--without-jemalloc", action="store_true",
                        help="the binary was built without jemalloc (a sanitizer build)")
    args = parser.parse_args()
    check_dockerfile(args.source, args.binary, args.without_jemalloc)
    check_compose(args.source, args.binary)
    for p in problems:
        print(f"FAIL {p}")
    print(f"docker/Dockerfile and docker/compose.yaml: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
