#!/usr/bin/env python3
"""Kubernetes JSON schemas for kubeconform, offline, from the API's own OpenAPI document.

kubeconform downloads its schemas from GitHub by default, which the build machines do not reach.
The Kubernetes source module (k8s.io/kubernetes, through the Go module proxy) ships the API's
OpenAPI v2 document, api/openapi-spec/swagger.json; this writes one schema per kind from it, named
as kubeconform's -schema-location template '{{ .ResourceKind }}{{ .KindSuffix }}.json' expects
(deployment-apps-v1.json, service-v1.json), each with the definitions it references. As the
schemas kubeconform fetches by default: IntOrString and Quantity accept a string or a number,
and in strict form (the default here) an object refuses properties its type does not have.

    openapi-to-schemas.py <swagger.json> <output dir> [--not-strict]
"""
import json
import os
import sys


def lower_kind_file(gvk):
    group = gvk["group"].split(".")[0]
    suffix = f"-{group}-{gvk['version']}" if group else f"-{gvk['version']}"
    return f"{gvk['kind'].lower()}{suffix}.json"


def refs(node, found):
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/definitions/"):
            found.add(ref[len("#/definitions/"):])
        for value in node.values():
            refs(value, found)
    elif isinstance(node, list):
        for value in node:
            refs(value, found)


def closure(name, definitions):
    seen, todo = set(), [name]
    while todo:
        current = todo.pop()
        if current in seen or current not in definitions:
            continue
        seen.add(current)
        found = set()
        refs(definitions[current], found)
        todo.extend(found - seen)
    return seen


def strict(node):
    if isinstance(node, dict):
        if "properties" in node and "additionalProperties" not in node:
            node["additionalProperties"] = False
        for value in node.values():
            strict(value)
    elif isinstance(node, list):
        for value in node:
            strict(value)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    source, out = sys.argv[1], sys.argv[2]
    is_strict = "--not-strict" not in sys.argv[3:]
    with open(source, encoding="utf-8") as f:
        definitions = json.load(f)["definitions"]
    string_or_number = {"oneOf": [{"type": "string"}, {"type": "number"}]}
    definitions["io.k8s.apimachinery.pkg.util.intstr.IntOrString"] = {
        "oneOf": [{"type": "string"}, {"type": "integer"}]
    }
    definitions["io.k8s.apimachinery.pkg.api.resource.Quantity"] = string_or_number
    os.makedirs(out, exist_ok=True)
    written = 0
    for name, definition in definitions.items():
        for gvk in definition.get("x-kubernetes-group-version-kind", []):
            schema = json.loads(json.dumps(definition))
            schema["$schema"] = "http://json-schema.org/draft-07/schema#"
            # apiVersion and kind must say this kind (kubeconform picked the file by them).
            api_version = f"{gvk['group']}/{gvk['version']}" if gvk["group"] else gvk["version"]
            properties = schema.setdefault("properties", {})
            properties["apiVersion"] = {"type": "string", "enum": [api_version]}
            properties["kind"] = {"type": "string", "enum": [gvk["kind"]]}
            schema["definitions"] = {
                dep: json.loads(json.dumps(definitions[dep]))
                for dep in closure(name, definitions)
                if dep != name
            }
            if is_strict:
                strict(schema)
            with open(os.path.join(out, lower_kind_file(gvk)), "w", encoding="utf-8") as f:
                json.dump(schema, f)
            written += 1
    print(f"{written} schemas in {out}")


if __name__ == "__main__":
    main()
