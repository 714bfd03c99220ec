#!/usr/bin/env python3
"""Checks deploy/kubernetes/: every file parses as YAML, every Job and Pod has the fields Kubernetes
requires and the ones this run depends on (backoffLimit 0 and restartPolicy Never for a Job; a Job
whose pods read their index Indexed, with completions and parallelism; an image named as the
kustomization sets it; every ConfigMap key, ConfigMap and claim a pod refers to defined, a
configMapGenerator's env file included), every pod is hardened (no service-account token, non-root
and RuntimeDefault seccomp; each container without privilege escalation or capabilities, a read-only
root with an emptyDir at /tmp, CPU and memory requested and limited; a deadline on each Job), and the
kustomizations list every manifest.

    deploy/check-manifests.py             the checks; exit 1 with one line per problem
    deploy/check-manifests.py --commands  the checks, then every container's command and args as JSON
                                          (the tests run them through richpush's own parser)
"""
import json
import os
import sys

import yaml

# RICHPUSH_MANIFESTS points the checks at another folder (the tests check that a broken copy fails).
ROOT = os.environ.get("RICHPUSH_MANIFESTS") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "kubernetes")


def documents():
    """Every manifest under ROOT: (relative path, parsed document), kustomizations apart."""
    found = []
    for folder, _, names in sorted(os.walk(ROOT)):
        for name in sorted(names):
            if not name.endswith(".yaml"):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as handle:
                for document in yaml.safe_load_all(handle):
                    found.append((os.path.relpath(path, ROOT), document))
    return found


def env_file(path):
    """A configMapGenerator's env file as kustomize reads it: (data, problems). KEY=VALUE a line, '#'
    lines and blank lines skipped; quotes and spaces around a value are kept in it, so they are refused."""
    data = {}
    problems = []
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except OSError as error:
        return data, [f"{os.path.relpath(path, ROOT)}: cannot be read ({error.strerror})"]
    for number, line in enumerate(lines, 1):
        line = line.lstrip()
        if not line or line.startswith("#"):
            continue
        label = f"{os.path.relpath(path, ROOT)}:{number}"
        key, equals, value = line.partition("=")
        if not equals or not key or key != key.strip():
            problems.append(f"{label}: not KEY=VALUE")
            continue
        if value != value.strip() or value[:1] in ("'", '"'):
            problems.append(f"{label}: {key}'s value has spaces or quotes around it, which the ConfigMap would keep")
        if key in data:
            problems.append(f"{label}: {key} is set twice")
        data[key] = value
    return data, problems


def generated(found):
    """The ConfigMaps the kustomizations' configMapGenerators make: (name -> data, problems)."""
    made = {}
    problems = []
    for path, document in found:
        if not isinstance(document, dict) or document.get("kind") != "Kustomization":
            continue
        folder = os.path.join(ROOT, os.path.dirname(path))
        for generator in document.get("configMapGenerator") or []:
            name = generator.get("name")
            if not name:
                problems.append(f"{path}: a configMapGenerator without a name")
                continue
            data = {}
            for literal in generator.get("literals") or []:
                key, _, value = str(literal).partition("=")
                data[key] = value
            for env in (generator.get("envs") or []) + ([generator["env"]] if generator.get("env") else []):
                values, found_problems = env_file(os.path.join(folder, env))
                data.update(values)
                problems += found_problems
            for file in generator.get("files") or []:
                key, _, source = str(file).rpartition("=")
                data[key or os.path.basename(source)] = "(file)"
            if name in made:
                problems.append(f"{path}: configMapGenerator {name} is defined twice")
            made[name] = data
    return made, problems


def pod_specs(document):
    """The pod spec of a Job or a Pod, or None."""
    if document.get("kind") == "Job":
        return document.get("spec", {}).get("template", {}).get("spec")
    if document.get("kind") == "Pod":
        return document.get("spec")
    return None


# Kubernetes quantities: a suffix and what it multiplies by.
SUFFIXES = {"m": 1e-3, "": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
            "Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60}


def quantity(value):
    """A Kubernetes quantity ("500m", "2", "1Gi") as a number, or None when it is not one."""
    text = str(value)
    for suffix in sorted(SUFFIXES, key=len, reverse=True):
        if suffix and not text.endswith(suffix):
            continue
        number = text[:len(text) - len(suffix)]
        try:
            return float(number) * SUFFIXES[suffix] if number else None
        except ValueError:
            return None
    return None


def hardening(path, kind, name, document, pod):
    """What a pod (a Job's or a Pod's) lacks of the hardening every pod here has, one sentence each."""
    problems = []
    label = f"{path}: {kind} {name}"
    if kind == "Job":
        deadline = document.get("spec", {}).get("activeDeadlineSeconds")
        if not isinstance(deadline, int) or isinstance(deadline, bool) or deadline < 1:
            problems.append(f"{label} has no activeDeadlineSeconds (a hung pod would hold its slot forever)")
    if pod.get("automountServiceAccountToken") is not False:
        problems.append(f"{label} mounts the service-account token (automountServiceAccountToken: false)")
    context = pod.get("securityContext") or {}
    if context.get("runAsNonRoot") is not True:
        problems.append(f"{label} does not enforce a non-root user (securityContext.runAsNonRoot: true)")
    if context.get("runAsUser") == 0:
        problems.append(f"{label} runs its pods as root (runAsUser: 0)")
    pod_seccomp = (context.get("seccompProfile") or {}).get("type")
    tmp_volumes = {v.get("name") for v in pod.get("volumes", []) if "emptyDir" in v}
    for container in pod.get("initContainers", []) + pod.get("containers", []):
        where = f"{path}: container {container.get('name', '?')}"
        own = container.get("securityContext") or {}
        if (own.get("seccompProfile") or {}).get("type", pod_seccomp) not in ("RuntimeDefault", "Localhost"):
            problems.append(f"{where} runs without a seccomp profile (seccompProfile: {{type: RuntimeDefault}})")
        if own.get("allowPrivilegeEscalation") is not False:
            problems.append(f"{where} allows privilege escalation (allowPrivilegeEscalation: false)")
        if own.get("privileged") is True:
            problems.append(f"{where} is privileged")
        if own.get("runAsNonRoot") is False or own.get("runAsUser") == 0:
            problems.append(f"{where} may run as root")
        if own.get("readOnlyRootFilesystem") is not True:
            problems.append(f"{where} has a writable root file system (readOnlyRootFilesystem: true)")
        capabilities = own.get("capabilities") or {}
        if "ALL" not in (capabilities.get("drop") or []) or capabilities.get("add"):
            problems.append(f"{where} keeps capabilities (capabilities: {{drop: [ALL]}}, none added)")
        if not any(m.get("mountPath") == "/tmp" and m.get("name") in tmp_volumes and not m.get("readOnly")
                   for m in container.get("volumeMounts", [])):
            problems.append(f"{where} has no emptyDir at /tmp (its root file system is read-only)")
        resources = container.get("resources") or {}
        for resource in ("cpu", "memory"):
            requested = (resources.get("requests") or {}).get(resource)
            limited = (resources.get("limits") or {}).get(resource)
            if requested is None or limited is None:
                problems.append(f"{where} needs a {resource} request and a {resource} limit")
                continue
            if quantity(requested) is None or quantity(limited) is None:
                problems.append(f"{where}: {resource} {requested} or {limited} is not a quantity")
            elif quantity(requested) > quantity(limited):
                problems.append(f"{where} requests more {resource} ({requested}) than its limit ({limited})")
    return problems


def check(found):
    """Problems, one sentence each, and every container's command."""
    made, problems = generated(found)
    commands = []
    config_maps = {name: set(data) for name, data in made.items()}
    claims = set()
    images = set()
    listed = {}
    for path, document in found:
        if not isinstance(document, dict) or "kind" not in document or "apiVersion" not in document:
            problems.append(f"{path}: a document without kind and apiVersion")
            continue
        kind = document["kind"]
        if kind == "Kustomization":
            folder = os.path.dirname(path)
            listed[folder] = set(os.path.normpath(os.path.join(folder, r)) for r in document.get("resources", []))
            images.update(image["name"] for image in document.get("images", []))
            continue
        if not document.get("metadata", {}).get("name"):
            problems.append(f"{path}: {kind} has no metadata.name")
        if kind == "ConfigMap":
            if document["metadata"]["name"] in made:
                problems.append(f"{path}: ConfigMap {document['metadata']['name']} is also a configMapGenerator's: "
                                "one apply would replace the other")
            config_maps[document["metadata"]["name"]] = set((document.get("data") or {}).keys())
        if kind == "PersistentVolumeClaim":
            claims.add(document["metadata"]["name"])
    for path, document in found:
        if not isinstance(document, dict) or document.get("kind") == "Kustomization":
            continue
        folder = os.path.dirname(path)
        if path not in listed.get(folder, set()):
            problems.append(f"{path}: not listed in {os.path.join(folder, 'kustomization.yaml')}")
        kind = document.get("kind")
        name = document.get("metadata", {}).get("name", "?")
        pod = pod_specs(document)
        if kind == "Job":
            if document.get("apiVersion") != "batch/v1":
                problems.append(f"{path}: Job {name} is not batch/v1")
            spec = document.get("spec", {})
            if spec.get("backoffLimit") != 0:
                problems.append(f"{path}: Job {name} needs backoffLimit: 0 (a shard re-run after its burst, or a "
                                "merge re-run, gives no new answer)")
            # A Job whose pods read their index is a set of shards: one pod per shard, all at once.
            if "JOB_COMPLETION_INDEX" in json.dumps(pod or {}):
                if spec.get("completionMode") != "Indexed":
                    problems.append(f"{path}: Job {name} is not an Indexed Job (completionMode: Indexed)")
                if not isinstance(spec.get("completions"), int) or spec["completions"] < 1:
                    problems.append(f"{path}: Job {name} has no completions")
                if spec.get("parallelism") != spec.get("completions"):
                    problems.append(
                        f"{path}: Job {name} does not run every shard at once (parallelism != completions)")
            if pod is not None and pod.get("restartPolicy") not in ("Never", "OnFailure"):
                problems.append(f"{path}: Job {name}'s pods need restartPolicy Never (a restarted shard counts twice)")
        if pod is None:
            continue
        problems += hardening(path, kind, name, document, pod)
        volumes = {v.get("name"): v for v in pod.get("volumes", [])}
        for volume in volumes.values():
            claim = volume.get("persistentVolumeClaim", {}).get("claimName")
            if claim is not None and claim not in claims:
                problems.append(f"{path}: volume {volume['name']} names claim {claim}, defined nowhere")
            config_map = volume.get("configMap", {}).get("name")
            if config_map is not None and config_map not in config_maps:
                problems.append(f"{path}: volume {volume['name']} names ConfigMap {config_map}, defined nowhere")
        containers = pod.get("initContainers", []) + pod.get("containers", [])
        if not pod.get("containers"):
            problems.append(f"{path}: {kind} {name} has no containers")
        for container in containers:
            label = f"{path}: container {container.get('name', '?')}"
            if not container.get("name") or not container.get("image"):
                problems.append(f"{label} needs a name and an image")
            elif container["image"] not in images:
                problems.append(f"{label} runs image {container['image']}, which no kustomization sets")
            for mount in container.get("volumeMounts", []):
                if mount.get("name") not in volumes:
                    problems.append(f"{label} mounts {mount.get('name')}, not a volume of its pod")
            environment = {}
            for variable in container.get("env", []):
                reference = variable.get("valueFrom", {}).get("configMapKeyRef")
                if reference is not None:
                    if reference.get("key") not in config_maps.get(reference.get("name"), set()):
                        problems.append(
                            f"{label}: {variable['name']} reads {reference.get('name')}/{reference.get('key')}, "
                            "defined nowhere")
                    else:
                        environment[variable["name"]] = [reference["name"], reference["key"]]
            script = " ".join(container.get("command", []) + container.get("args", []))
            completions = document.get("spec", {}).get("completions") if kind == "Job" else None
            marker = "--shard $((JOB_COMPLETION_INDEX + 1))/"
            if completions is not None and marker in script:
                count = script.split(marker, 1)[1].split()[0]
                if count != str(completions):
                    problems.append(f"{label} runs --shard I/{count}, but its Job has {completions} completions")
            if not container.get("command"):
                problems.append(f"{label} names no command (a FROM scratch image has no default)")
            commands.append({
                "file": path, "name": name, "container": container.get("name"),
                "command": container.get("command", []), "args": container.get("args", []),
                "environment": environment,
                "completions": document.get("spec", {}).get("completions") if kind == "Job" else None,
            })
    return problems, commands, config_maps


def config_values(found):
    """ConfigMap name -> its data, the generated ones under the name the manifests use."""
    values = generated(found)[0]
    values.update({d["metadata"]["name"]: d.get("data") or {} for _, d in found
                   if isinstance(d, dict) and d.get("kind") == "ConfigMap"})
    return values


def main():
    found = documents()
    problems, commands, _ = check(found)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return 1
    if "--commands" in sys.argv[1:]:
        print(json.dumps({"commands": commands, "config_maps": config_values(found)}, indent=1))
    else:
        print(f"deploy/kubernetes: {len(found)} documents, {len(commands)} containers checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
