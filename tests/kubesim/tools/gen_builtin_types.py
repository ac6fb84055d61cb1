#!/usr/bin/env python3
"""Generate tests/kubesim/builtin_types.txt, the field table of every
built-in Kubernetes type kubesim serves, from the Go API types.

The table gives kubesim, for each struct reachable from the kinds it
serves, the JSON name, protobuf field number, wire kind, and whether the Go
field is a pointer, omitempty or inlined. kubesim uses it to decode the
protobuf bodies kubectl's typed clients send (application/vnd.kubernetes.protobuf)
and to find unknown fields under fieldValidation=Strict/Warn.

Run by hand when the served kinds change, with checkouts of k8s.io/api and
k8s.io/apimachinery (any release at or after 1.32; field numbers never change):

    tools/gen_builtin_types.py API_DIR[@REF] APIMACHINERY_DIR[@REF] > builtin_types.txt

Each may also be a bare git repository, read at REF (default HEAD); the
committed table was made from the tags v0.32.9 of both (Kubernetes 1.32),
so that strict validation knows exactly the fields of a 1.32 server.
"""
import os
import re
import subprocess
import sys

# Go package (import path suffix) -> (short name used in the table, files)
PACKAGES = {
    "core/v1": ("core.v1", ["core/v1/types.go"]),
    "batch/v1": ("batch.v1", ["batch/v1/types.go"]),
    "apps/v1": ("apps.v1", ["apps/v1/types.go"]),
    "policy/v1": ("policy.v1", ["policy/v1/types.go"]),
    "rbac/v1": ("rbac.v1", ["rbac/v1/types.go"]),
    "coordination/v1": ("coordination.v1", ["coordination/v1/types.go"]),
    "authorization/v1": ("authorization.v1", ["authorization/v1/types.go"]),
    "authentication/v1": ("authentication.v1", ["authentication/v1/types.go"]),
    "autoscaling/v1": ("autoscaling.v1", ["autoscaling/v1/types.go"]),
    "meta/v1": ("meta.v1", ["pkg/apis/meta/v1/types.go"]),
}
# Import paths as the Go files name them.
IMPORTS = {
    "metav1": "meta.v1", "v1": None, "corev1": "core.v1",  # v1 is resolved per file below
    "resource": "resource", "intstr": "intstr", "runtime": "runtime", "types": "types",
}
# Types with their own protobuf form and JSON rendering (kubesim decodes
# them by name).
SPECIAL = {
    "meta.v1.Time": "time", "meta.v1.MicroTime": "time", "meta.v1.Duration": "duration",
    "meta.v1.FieldsV1": "fieldsv1", "resource.Quantity": "quantity",
    "intstr.IntOrString": "intorstring", "runtime.RawExtension": "rawext",
}
ROOTS = [
    "core.v1.Namespace", "core.v1.Node", "core.v1.Pod", "core.v1.Service", "core.v1.Event",
    "core.v1.ConfigMap", "core.v1.Secret", "core.v1.ServiceAccount", "core.v1.Binding",
    "batch.v1.Job", "apps.v1.Deployment", "policy.v1.PodDisruptionBudget", "policy.v1.Eviction",
    "rbac.v1.ClusterRole", "rbac.v1.ClusterRoleBinding", "rbac.v1.Role", "rbac.v1.RoleBinding",
    "coordination.v1.Lease", "authorization.v1.SelfSubjectAccessReview",
    "authorization.v1.SelfSubjectRulesReview", "authorization.v1.SubjectAccessReview",
    "authentication.v1.SelfSubjectReview", "autoscaling.v1.Scale", "meta.v1.DeleteOptions",
    "meta.v1.Status",
]
SCALARS = {"string": "str", "bool": "bool", "int32": "i32", "int64": "i64", "int": "i64",
           "uint32": "i32", "uint64": "i64", "float64": "f64", "float32": "f64"}


def read(root, rel):
    root, _, ref = root.partition("@")
    path = os.path.join(root, rel)
    if not ref and os.path.exists(path):
        with open(path) as f:
            return f.read()
    return subprocess.run(["git", "--git-dir", root, "show", (ref or "HEAD") + ":" + rel],
                          check=True, capture_output=True, text=True).stdout


FIELD = re.compile(r'^\s*(?:(\w+)\s+)?([\*\[\]\w\.]+)\s+`([^`]*)`')


def parse_file(text, pkg, structs, aliases):
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r'^type (\w+) struct \{', line)
        if m:
            name, fields = m.group(1), []
            i += 1
            while not lines[i].startswith("}"):
                fm = FIELD.match(lines[i])
                if fm and not lines[i].strip().startswith("//"):
                    fields.append(fm.groups())
                i += 1
            structs[pkg + "." + name] = fields
        else:
            m = re.match(r'^type (\w+) (\S.*?)\s*(//.*)?$', line)
            if m and m.group(2) not in ("struct {", "interface {"):
                aliases[pkg + "." + m.group(1)] = m.group(2)
        i += 1


def qualify(t, pkg):
    if "." in t:
        imp, name = t.split(".", 1)
        base = IMPORTS.get(imp, imp)
        if base is None:  # "v1." inside apps/v1 etc. means core/v1
            base = "core.v1"
        return base + "." + name
    return pkg + "." + t


def resolve(t, pkg, structs, aliases):
    """(kind, target) for a Go type: kind is str/bool/i32/i64/f64/bytes or
    msg/special with target the qualified name; lists/maps as tuples."""
    if t.startswith("*"):
        return resolve(t[1:], pkg, structs, aliases)
    if t == "[]byte":
        return ("bytes", None)
    if t.startswith("[]"):
        return ("list", resolve(t[2:], pkg, structs, aliases))
    if t.startswith("map["):
        key, val = re.match(r'map\[([^\]]+)\](.*)', t).groups()
        return ("map", resolve(val, pkg, structs, aliases))
    if t in SCALARS:
        return (SCALARS[t], None)
    q = qualify(t, pkg)
    if q in SPECIAL:
        return ("special", q)
    if q in structs:
        return ("msg", q)
    if q in aliases:
        return resolve(aliases[q], q.rsplit(".", 1)[0], structs, aliases)
    if q == "types.UID":
        return ("str", None)
    raise SystemExit("unresolved type %s (%s)" % (t, q))


def main():
    api, machinery = sys.argv[1], sys.argv[2]
    structs, aliases = {}, {}
    for key, (short, files) in PACKAGES.items():
        root = machinery if short == "meta.v1" else api
        for rel in files:
            parse_file(read(root, rel), short, structs, aliases)
    out, seen, queue = [], set(), list(ROOTS)
    while queue:
        name = queue.pop(0)
        if name in seen:
            continue
        seen.add(name)
        pkg = name.rsplit(".", 1)[0]
        rows = []
        for fname, gotype, tags in structs[name]:
            pb = re.search(r'protobuf:"([^"]*)"', tags)
            js = re.search(r'json:"([^"]*)"', tags)
            if not pb or pb.group(1) == "-":
                continue
            parts = pb.group(1).split(",")
            num = int(parts[1])
            jparts = js.group(1).split(",") if js else [""]
            inline = jparts[0] == ""  # json:"" or json:",inline"
            jname = "-" if inline else jparts[0]
            kind, target = resolve(gotype, pkg, structs, aliases)
            flags = ""
            if gotype.startswith("*"):
                flags += "p"
            if "omitempty" in jparts:
                flags += "o"
            if inline:
                flags += "i"
            shape = "1"
            if kind == "map" and target[0] == "list" and target[1][0] == "str":
                # map[string]ExtraValue: protobuf wraps each []string value
                # in a message {repeated string items = 1}.
                kind, target = "map", ("special", "strlist")
            if kind == "list":
                shape, (kind, target) = "r", target
            elif kind == "map":
                shape, (kind, target) = "m", target
            if kind in ("msg", "special"):
                if kind == "msg":
                    queue.append(target)
                kind = ("@" if kind == "msg" else "$") + target
            rows.append("%d %s %s %s %s" % (num, jname, shape, kind, flags or "-"))
        out.append("msg " + name)
        out.extend(rows)
    print("# Generated by tests/kubesim/tools/gen_builtin_types.py from the Go API types;")
    print("# lines: msg NAME, then: NUMBER JSON_NAME(- when inlined) SHAPE(1 one, r list,")
    print("# m map with string keys) TYPE(str bool i32 i64 f64 bytes, @message, $special)")
    print("# FLAGS(p pointer, o omitempty, i inlined; - none).")
    print("\n".join(out))


if __name__ == "__main__":
    main()
