#!/usr/bin/env python3
"""kubeconform schemas from CustomResourceDefinitions, offline (openapi2jsonschema's approach).

KEDA's ScaledObject is not a Kubernetes API kind, so the Kubernetes OpenAPI document has no schema
for it. The KEDA Go module (github.com/kedacore/keda/v2, through the Go module proxy) carries its
CRDs in config/crd/bases; this writes one schema per CRD version from each one's
openAPIV3Schema, named as the '{{ .ResourceKind }}{{ .KindSuffix }}.json' template expects
(scaledobject-keda-v1alpha1.json). As openapi2jsonschema does: x-kubernetes-int-or-string accepts a
string or an integer, and in strict form (the default) an object with listed properties refuses
others, unless it preserves unknown fields.

    crd-to-schemas.py <output dir> <crd.yaml>... [--not-strict]
"""
import json
import os
import sys

import yaml


def adapt(node, is_strict):
    if isinstance(node, dict):
        if node.get("x-kubernetes-int-or-string"):
            node.pop("type", None)
            node["oneOf"] = [{"type": "string"}, {"type": "integer"}]
        if (
            is_strict
            and "properties" in node
            and "additionalProperties" not in node
            and not node.get("x-kubernetes-preserve-unknown-fields")
        ):
            node["additionalProperties"] = False
        for value in node.values():
            adapt(value, is_strict)
    elif isinstance(node, list):
        for value in node:
            adapt(value, is_strict)


def main():
    args = [a for a in sys.argv[1:] if a != "--not-strict"]
    if len(args) < 2:
        sys.exit(__doc__)
    is_strict = "--not-strict" not in sys.argv[1:]
    out, sources = args[0], args[1:]
    os.makedirs(out, exist_ok=True)
    written = 0
    for source in sources:
        with open(source, encoding="utf-8") as f:
            for crd in yaml.safe_load_all(f):
                if not crd or crd.get("kind") != "CustomResourceDefinition":
                    continue
                spec = crd["spec"]
                group, kind = spec["group"], spec["names"]["kind"]
                for version in spec["versions"]:
                    schema = json.loads(json.dumps(version["schema"]["openAPIV3Schema"]))
                    schema["$schema"] = "http://json-schema.org/draft-07/schema#"
                    # apiVersion and kind must say this kind (kubeconform picked the file by them).
                    properties = schema.setdefault("properties", {})
                    properties["apiVersion"] = {
                        "type": "string",
                        "enum": [f"{group}/{version['name']}"],
                    }
                    properties["kind"] = {"type": "string", "enum": [kind]}
                    # metadata is an ObjectMeta, which the CRD leaves open.
                    properties["metadata"] = {"type": "object"}
                    adapt(schema, is_strict)
                    name = f"{kind.lower()}-{group.split('.')[0]}-{version['name']}.json"
                    with open(os.path.join(out, name), "w", encoding="utf-8") as f:
                        json.dump(schema, f)
                    written += 1
    print(f"{written} schemas in {out}")


if __name__ == "__main__":
    main()
