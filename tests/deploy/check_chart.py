#!/usr/bin/env python3
"""Checks the Helm chart helm/exactly without a cluster.

- files/exactly-rules.yaml is config/prometheus/exactly-rules.yaml, byte for byte;
- Chart.yaml's appVersion is the project's version (CMakeLists.txt);
- values.schema.json's config tables have exactly the keys of config/exactly.example.toml, with
  their types, choices and bounds;
- for each helm/exactly/ci/*.yaml: `helm lint --strict` and `helm template` pass; the rendered
  config.toml passes `exactly validate` with the environment the pod gives it; every ${VAR} in it
  is set in the container's environment; the pod runs as non-root with a read-only root file
  system and no capabilities; terminationGracePeriodSeconds is above shutdown.timeout_ms; probes,
  container port and Service port follow metrics.listen; static membership, SASL, plugins,
  PodDisruptionBudget, ServiceMonitor and PrometheusRule are rendered as the values ask;
- values that must be refused are: a missing required key, an unknown config key, a bad kind.

  check_chart.py --source REPO --binary build/app/exactly --helm scripts/helm.sh
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import yaml

problems: list[str] = []


def problem(message: str) -> None:
    problems.append(message)


def helm(helm_sh: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(helm_sh), *args], capture_output=True, text=True)


# --- values.schema.json against the config reference ----------------------------------------


def example_keys(example: str) -> dict[str, dict[str, dict]]:
    """{table: {key: {"type", "choices", "min", "max"}}} from config/exactly.example.toml,
    commented-out optional keys included, pass-through and free-form tables left out."""
    tables: dict[str, dict[str, dict]] = {}
    table = None
    comment: list[str] = []
    for line in example.splitlines():
        header = re.fullmatch(r"\[([\w.]+)\]", line)
        if header:
            table = header.group(1)
            if not table.startswith("librdkafka") and table != "transform.config":
                tables[table] = {}
            comment = []
            continue
        if line.startswith("#") and not re.match(r"# [\w]+ = ", line):
            comment.append(line[1:].strip())
            continue
        key = re.match(r"(?:# )?(\w+) = (.*)$", line)
        if key and table in tables:
            value = tomllib.loads(f"v = {key.group(2)}")["v"]
            kind = {bool: "boolean", int: "integer", str: "string"}[type(value)]
            text = " ".join(comment)
            spec: dict = {"type": kind}
            choices = re.search(r"One of ((?:\"[^\"]+\"(?:, )?)+)\.", text)
            if choices:
                spec["choices"] = re.findall(r"\"([^\"]+)\"", choices.group(1))
            bounds = re.search(r"from (-?\d+) to (-?\d+)\.", text)
            if bounds:
                spec["min"], spec["max"] = int(bounds.group(1)), int(bounds.group(2))
            least = re.search(r"at least (-?\d+)\.", text)
            if least:
                spec["min"] = int(least.group(1))
            tables[table][key.group(1)] = spec
        comment = [] if line == "" else comment
    return tables


def check_schema(root: Path, chart: Path) -> None:
    schema = json.loads((chart / "values.schema.json").read_text())
    config = schema["properties"]["config"]["properties"]
    reference = example_keys((root / "config/exactly.example.toml").read_text())
    rendered_tables = set(config) - {"librdkafka"}
    reference_tables = {t.split(".")[0] for t in reference}
    if rendered_tables != reference_tables:
        problem(f"values.schema.json: config tables {sorted(rendered_tables)} differ from the "
                f"example's {sorted(reference_tables)}")
    if set(config.get("librdkafka", {}).get("properties", {})) != {"common", "consumer", "producer"}:
        problem("values.schema.json: config.librdkafka is not common, consumer and producer")
    for table, keys in reference.items():
        props = config.get(table, {}).get("properties", {})
        if config.get(table, {}).get("additionalProperties") is not False:
            problem(f"values.schema.json: config.{table} accepts unknown keys (the service refuses"
                    " them)")
        mine = set(props) - ({"config"} if table == "transform" else set())
        if mine != set(keys):
            problem(f"values.schema.json: config.{table} has keys {sorted(mine)}, the example "
                    f"{sorted(keys)}")
        for name, spec in keys.items():
            entry = props.get(name)
            if entry is None:
                continue
            if "choices" in spec:
                if entry.get("enum") != spec["choices"]:
                    problem(f"values.schema.json: config.{table}.{name} enum {entry.get('enum')}, "
                            f"the example says {spec['choices']}")
                continue
            if entry.get("type") != spec["type"]:
                problem(f"values.schema.json: config.{table}.{name} is {entry.get('type')}, the "
                        f"example's is {spec['type']}")
            for bound, word in (("min", "minimum"), ("max", "maximum")):
                if spec.get(bound) != entry.get(word):
                    problem(f"values.schema.json: config.{table}.{name} {word} "
                            f"{entry.get(word)}, the example says {spec.get(bound)}")


# --- rendered manifests ---------------------------------------------------------------------


def merged_values(chart: Path, values_file: Path) -> dict:
    def merge(base, over):
        for k, v in over.items():
            if isinstance(v, dict) and isinstance(base.get(k), dict):
                merge(base[k], v)
            elif v is None:
                base.pop(k, None)
            else:
                base[k] = v
        return base
    return merge(yaml.safe_load((chart / "values.yaml").read_text()),
                 yaml.safe_load(values_file.read_text()) or {})


def containers_of(pod: dict) -> list[dict]:
    return pod.get("initContainers", []) + pod.get("containers", [])


def check_security(name: str, pod: dict) -> None:
    if not pod.get("securityContext", {}).get("runAsNonRoot"):
        problem(f"{name}: the pod's securityContext lacks runAsNonRoot: true")
    for c in containers_of(pod):
        sc = c.get("securityContext", {})
        if not sc.get("readOnlyRootFilesystem"):
            problem(f"{name}: container {c['name']} has a writable root file system")
        if sc.get("capabilities", {}).get("drop") != ["ALL"]:
            problem(f"{name}: container {c['name']} does not drop ALL capabilities")
        if sc.get("allowPrivilegeEscalation") is not False:
            problem(f"{name}: container {c['name']} allows privilege escalation")


def check_release(root: Path, chart: Path, helm_sh: Path, binary: Path, values_file: Path,
                  work: Path) -> None:
    name = values_file.name
    lint = helm(helm_sh, "lint", "--strict", str(chart), "-f", str(values_file))
    if lint.returncode != 0:
        problem(f"{name}: helm lint --strict failed:\n{lint.stdout}{lint.stderr}")
    namespace, release = "pipelines", "ci"
    out = helm(helm_sh, "template", release, str(chart), "-n", namespace, "-f", str(values_file))
    if out.returncode != 0:
        problem(f"{name}: helm template failed:\n{out.stderr}")
        return
    docs = [d for d in yaml.safe_load_all(out.stdout) if d]
    by_kind: dict[str, list[dict]] = {}
    for d in docs:
        by_kind.setdefault(d["kind"], []).append(d)
    values = merged_values(chart, values_file)
    kind = values["kind"]
    workloads = by_kind.get(kind, [])
    if len(workloads) != 1 or len(by_kind.get("StatefulSet", []) + by_kind.get("Deployment", [])) != 1:
        problem(f"{name}: expected one {kind} and no other workload")
        return
    workload = workloads[0]
    pod = workload["spec"]["template"]["spec"]
    main = next(c for c in pod["containers"] if c["name"] == "exactly")
    env = {e["name"]: e for e in main.get("env", [])}

    # config.toml: valid under the environment the pod gives it.
    configmaps = by_kind.get("ConfigMap", [])
    if len(configmaps) != 1 or "config.toml" not in configmaps[0].get("data", {}):
        problem(f"{name}: no ConfigMap with config.toml")
        return
    text = configmaps[0]["data"]["config.toml"]
    config_file = work / f"{values_file.stem}.toml"
    config_file.write_text(text)
    pod_env = {"POD_NAME": f"{release}-exactly-0", "POD_NAMESPACE": namespace}
    for var in re.findall(r"\$\{(\w+)\}", text):
        if var not in env and not main.get("envFrom"):
            problem(f"{name}: config.toml uses ${{{var}}}, which the container does not set")
        pod_env.setdefault(var, "value-of-" + var)
    run = subprocess.run([str(binary), "validate", "--config", str(config_file)],
                         capture_output=True, text=True,
                         env={**{k: v for k, v in os.environ.items() if k not in pod_env},
                              **pod_env})
    if run.returncode != 0:
        problem(f"{name}: the rendered config.toml is refused by exactly validate:\n"
                f"{run.stderr}{run.stdout}\n{text}")
        return
    config = tomllib.loads(text)
    mount = next((m for m in main["volumeMounts"] if m["name"] == "config"), None)
    if mount is None or mount["mountPath"] != "/etc/exactly" or \
            main.get("args", [])[-1:] != ["/etc/exactly/config.toml"]:
        problem(f"{name}: the container does not run the ConfigMap's /etc/exactly/config.toml")

    # Shutdown: the kubelet waits longer than the service's own bound.
    timeout_ms = config.get("shutdown", {}).get("timeout_ms", 30000)
    grace = pod.get("terminationGracePeriodSeconds", 30)
    if grace * 1000 <= timeout_ms:
        problem(f"{name}: terminationGracePeriodSeconds {grace} is not above shutdown.timeout_ms "
                f"{timeout_ms}")

    check_security(name, pod)

    # Port, probes, Service.
    port = int(config["metrics"]["listen"].rsplit(":", 1)[1])
    ports = {p["name"]: p["containerPort"] for p in main.get("ports", [])}
    if ports.get("metrics") != port:
        problem(f"{name}: containerPort {ports.get('metrics')} is not metrics.listen's {port}")
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz"),
                        ("startupProbe", "/healthz")):
        get = main.get(probe, {}).get("httpGet", {})
        if get.get("path") != path or get.get("port") != "metrics":
            problem(f"{name}: {probe} is not GET {path} on the metrics port")
    services = by_kind.get("Service", [])
    if len(services) != 1 or services[0]["spec"]["ports"][0]["port"] != port or \
            not services[0]["spec"].get("publishNotReadyAddresses"):
        problem(f"{name}: expected one Service on port {port} publishing not-ready pods")
    if kind == "StatefulSet" and workload["spec"].get("serviceName") != \
            (services[0]["metadata"]["name"] if services else None):
        problem(f"{name}: the StatefulSet's serviceName is not the chart's Service")

    # Static membership from the pod's name, for a StatefulSet.
    consumer = config.get("librdkafka", {}).get("consumer", {})
    instance_id = consumer.get("group.instance.id")
    if kind == "StatefulSet" and values["staticMembership"]:
        if not instance_id or "${POD_NAME}" not in instance_id:
            problem(f"{name}: static membership on, but group.instance.id is {instance_id!r}")
        if env.get("POD_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") \
                != "metadata.name":
            problem(f"{name}: POD_NAME does not come from metadata.name")
    elif instance_id and "group.instance.id" not in (values["config"].get("librdkafka") or {})\
            .get("consumer", {}):
        problem(f"{name}: group.instance.id set for a {kind} without static membership")

    # SASL: the password only through the environment, from a Secret.
    common = config.get("librdkafka", {}).get("common", {})
    sasl = values["sasl"]
    if sasl["enabled"]:
        if common.get("sasl.password") != "${KAFKA_PASSWORD}":
            problem(f"{name}: sasl.password is not ${{KAFKA_PASSWORD}}")
        ref = env.get("KAFKA_PASSWORD", {}).get("valueFrom", {}).get("secretKeyRef", {})
        secret_name = sasl["existingSecret"] or next(
            (s["metadata"]["name"] for s in by_kind.get("Secret", [])), None)
        if ref.get("name") != secret_name or ref.get("key") != sasl["existingSecretKey"]:
            problem(f"{name}: KAFKA_PASSWORD is not the Secret {secret_name}'s key")
        outside_secrets = yaml.safe_dump([d for d in docs if d["kind"] != "Secret"])
        if sasl["password"] and sasl["password"] in outside_secrets:
            problem(f"{name}: the SASL password appears outside the Secret")
        if bool(by_kind.get("Secret")) == bool(sasl["existingSecret"]):
            problem(f"{name}: a chart Secret is made exactly when no existingSecret is named")
    elif "sasl.password" in common or "KAFKA_PASSWORD" in env:
        problem(f"{name}: SASL is off, but the config or environment has a password")

    # Plugins: mounted where transform.plugin_dir says.
    plugins = values["plugins"]
    plugin_mount = next((m for m in main["volumeMounts"] if m["name"] == "plugins"), None)
    if plugins["image"]["repository"] or plugins["volume"]:
        plugin_dir = config["transform"].get("plugin_dir")
        if plugin_mount is None or plugin_mount["mountPath"] != plugin_dir:
            problem(f"{name}: plugins are not mounted at transform.plugin_dir ({plugin_dir})")
        plugin = config["transform"].get("plugin")
        if plugin and not plugin.startswith(plugin_dir + "/"):
            problem(f"{name}: transform.plugin {plugin} is outside the plugin folder")
        init = [c for c in pod.get("initContainers", []) if c["name"] == "plugins"]
        if bool(plugins["image"]["repository"]) != bool(init):
            problem(f"{name}: an init container copies plugins exactly when plugins.image is set")
    elif plugin_mount is not None:
        problem(f"{name}: a plugin volume without plugins values")

    if values["podDisruptionBudget"]["enabled"] and len(by_kind.get("PodDisruptionBudget", [])) != 1:
        problem(f"{name}: no PodDisruptionBudget")

    # ServiceMonitor and PrometheusRule, only when asked; the rules are the project's.
    monitors = by_kind.get("ServiceMonitor", [])
    if bool(monitors) != values["serviceMonitor"]["enabled"]:
        problem(f"{name}: ServiceMonitor rendered: {bool(monitors)}, asked: "
                f"{values['serviceMonitor']['enabled']}")
    for m in monitors:
        selector = m["spec"]["selector"]["matchLabels"]
        labels = services[0]["metadata"]["labels"] if services else {}
        if any(labels.get(k) != v for k, v in selector.items()) or \
                m["spec"]["endpoints"][0]["port"] != "metrics":
            problem(f"{name}: the ServiceMonitor does not select the Service's metrics port")
    rules = by_kind.get("PrometheusRule", [])
    if bool(rules) != values["prometheusRule"]["enabled"]:
        problem(f"{name}: PrometheusRule rendered: {bool(rules)}, asked: "
                f"{values['prometheusRule']['enabled']}")
    expected = yaml.safe_load((root / "config/prometheus/exactly-rules.yaml").read_text())
    for r in rules:
        if r["spec"]["groups"] != expected["groups"]:
            problem(f"{name}: the PrometheusRule's groups are not config/prometheus/"
                    "exactly-rules.yaml's")


def check_refusals(chart: Path, helm_sh: Path) -> None:
    base = str(chart / "ci/default-values.yaml")
    cases = [
        (["--set", "config.pipeline.input_topic="], "config.pipeline.input_topic is required"),
        (["--set", "config.pipeline.input_topik=x"], "input_topik"),
        (["--set", "kind=DaemonSet"], "kind"),
        (["--set", "config.metrics.listen="], "listen"),
        (["--set", "sasl.enabled=true", "--set", "sasl.username=u"], "sasl.password"),
        (["--set", "plugins.image.repository=p", "--set", "plugins.volume.emptyDir.medium="],
         "not both"),
    ]
    for args, words in cases:
        out = helm(helm_sh, "template", "ci", str(chart), "-f", base, *args)
        if out.returncode == 0 or words not in out.stderr:
            problem(f"helm template {' '.join(args)}: expected a refusal naming '{words}', got "
                    f"exit {out.returncode}: {out.stderr.strip()[:300]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, required=True)
    parser.add_argument("--binary", type=Path, required=True)
    parser.add_argument("--helm", type=Path, required=True, help="scripts/helm.sh")
    args = parser.parse_args()
    root = args.source.resolve()
    chart = root / "helm/exactly"

    rules, copy = root / "config/prometheus/exactly-rules.yaml", chart / "files/exactly-rules.yaml"
    if rules.read_bytes() != copy.read_bytes():
        problem(f"{copy.relative_to(root)} differs from {rules.relative_to(root)}: "
                f"cp {rules.relative_to(root)} {copy.relative_to(root)}")
    app_version = yaml.safe_load((chart / "Chart.yaml").read_text())["appVersion"]
    project = re.search(r"project\(exactly VERSION ([\d.]+)", (root / "CMakeLists.txt").read_text())
    if not project or project.group(1) != str(app_version):
        problem(f"Chart.yaml appVersion {app_version} is not the project's version "
                f"{project.group(1) if project else '?'}")
    check_schema(root, chart)

    # Builds helm on first use (scripts/helm.sh says how long that takes and why).
    version = helm(args.helm, "version", "--short")
    if version.returncode != 0:
        print(f"FAIL helm is not available: {version.stderr.strip()}")
        return 1
    print(f"helm {version.stdout.strip()}")
    values_files = sorted((chart / "ci").glob("*.yaml"))
    if len(values_files) < 3:
        problem("helm/exactly/ci: expected at least three values files")
    with tempfile.TemporaryDirectory() as work:
        for values_file in values_files:
            check_release(root, chart, args.helm, args.binary, values_file, Path(work))
            print(f"checked {values_file.relative_to(root)}")
    check_refusals(chart, args.helm)
    for p in problems:
        print(f"FAIL {p}")
    print(f"helm/exactly: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
