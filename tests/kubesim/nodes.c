/* Node inventory. */
#include "nodes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "rtypes.h"
#include "store.h"
#include "util.h"

static const char *default_nodes =
    "[{\"namePrefix\":\"cpu-node-\",\"count\":3,"
    "\"labels\":{\"node.kubernetes.io/instance-type\":\"cpu-16\"},"
    "\"capacity\":{\"cpu\":\"16\",\"memory\":\"64Gi\",\"pods\":\"110\"}},"
    "{\"namePrefix\":\"gpu-node-\",\"count\":2,"
    "\"labels\":{\"node.kubernetes.io/instance-type\":\"gpu-8xh100\","
    "\"nvidia.com/gpu.product\":\"NVIDIA-H100-80GB-HBM3\",\"nvidia.com/gpu.present\":\"true\"},"
    "\"capacity\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"110\",\"nvidia.com/gpu\":\"8\"},"
    "\"taints\":[{\"key\":\"nvidia.com/gpu\",\"value\":\"present\",\"effect\":\"NoSchedule\"}]}]";

/* status.nodeInfo with every field NodeSystemInfo requires, so typed
 * clients (the Python client, client-go) can decode a Node. machineID and
 * systemUUID are stable per node name; bootID is new for each kubesim
 * that creates the node. kubeProxyVersion is empty, as a 1.32 kubelet
 * leaves it. */
static json_t *node_info(const char *name)
{
    char mid[48], suuid[40], boot[40];
    struct utsname u;
    ks_sha1_hex(name, strlen(name), mid, sizeof(mid));
    mid[32] = '\0';
    snprintf(suuid, sizeof(suuid), "%.8s-%.4s-%.4s-%.4s-%.12s", mid, mid + 8, mid + 12, mid + 16,
             mid + 20);
    ks_uuid(boot, sizeof(boot));
    const char *kernel = uname(&u) == 0 ? u.release : "unknown";
    return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "machineID", mid, "systemUUID",
                     suuid, "bootID", boot, "kernelVersion", kernel, "osImage",
                     "kubesim (Kubernetes API simulator)", "containerRuntimeVersion", "kubesim://1",
                     "kubeletVersion", "v1.32.5-kubesim", "kubeProxyVersion", "", "operatingSystem",
                     "linux", "architecture", "amd64");
}

static void make_node(const char *name, json_t *spec)
{
    json_t *labels = json_deep_copy(json_object_get(spec, "labels"));
    if (!labels)
        labels = json_object();
    json_object_set_new(labels, "kubernetes.io/hostname", json_string(name));
    json_object_set_new(labels, "kubernetes.io/os", json_string("linux"));
    json_object_set_new(labels, "kubernetes.io/arch", json_string("amd64"));
    json_t *cap = json_deep_copy(json_object_get(spec, "capacity"));
    if (!cap)
        cap = json_pack("{s:s,s:s,s:s}", "cpu", "8", "memory", "32Gi", "pods", "110");
    if (!json_object_get(cap, "pods"))
        json_object_set_new(cap, "pods", json_string("110"));
    json_t *alloc = json_deep_copy(json_object_get(spec, "allocatable"));
    if (!alloc)
        alloc = json_deep_copy(cap);
    json_t *conds = json_array();
    const char *types[] = {"MemoryPressure", "DiskPressure", "PIDPressure", "Ready"};
    const char *reasons[] = {"KubeletHasSufficientMemory", "KubeletHasNoDiskPressure",
                             "KubeletHasSufficientPID", "KubeletReady"};
    const char *msgs[] = {"kubelet has sufficient memory available", "kubelet has no disk pressure",
                          "kubelet has sufficient PID available",
                          "kubelet is posting ready status"};
    for (int i = 0; i < 4; i++) {
        json_t *now = ks_json_now();
        json_array_append_new(conds, json_pack("{s:s,s:s,s:s,s:s,s:O,s:O}", "type", types[i],
                                               "status", i == 3 ? "True" : "False", "reason",
                                               reasons[i], "message", msgs[i], "lastHeartbeatTime",
                                               now, "lastTransitionTime", now));
        json_decref(now);
    }
    json_t *node =
        json_pack("{s:s,s:s,s:{s:s,s:o},s:{},s:{s:o,s:o,s:o,s:o,s:[{s:s,s:s}]}}", "kind", "Node",
                  "apiVersion", "v1", "metadata", "name", name, "labels", labels, "spec", "status",
                  "capacity", cap, "allocatable", alloc, "conditions", conds, "nodeInfo",
                  node_info(name), "addresses", "type", "InternalIP", "address", "127.0.0.1");
    json_t *taints = json_object_get(spec, "taints");
    if (json_array_size(taints))
        ks_jset(node, "spec.taints", json_deep_copy(taints));
    if (json_is_true(json_object_get(spec, "unschedulable")))
        ks_jset(node, "spec.unschedulable", json_true());
    json_t *stored = ks_store_get(KS_RT_NODES, NULL, name);
    if (stored)
        json_decref(node); /* restored from the state file */
    else
        ks_store_create(KS_RT_NODES, node, &stored);
    /* The kubelet's heartbeat Lease (kubectl describe node shows it). It
     * is not renewed every 10 s as a kubelet does: nothing reads its age,
     * and renewals would fill the watch window. */
    if (stored && !ks_store_get(KS_RT_LEASES, "kube-node-lease", name)) {
        char ts[40], micro[48];
        ks_fmt_time(ks_now(), ts, sizeof(ts));
        ts[strlen(ts) - 1] = '\0'; /* renewTime is a MicroTime: 6 fraction digits */
        snprintf(micro, sizeof(micro), "%s.000000Z", ts);
        json_t *now = json_string(micro);
        json_t *lease =
            json_pack("{s:s,s:s,s:{s:s,s:s,s:[{s:s,s:s,s:s,s:s}]},s:{s:s,s:i,s:O}}", "kind",
                      "Lease", "apiVersion", "coordination.k8s.io/v1", "metadata", "name", name,
                      "namespace", "kube-node-lease", "ownerReferences", "apiVersion", "v1", "kind",
                      "Node", "name", name, "uid", ks_meta_uid(stored), "spec", "holderIdentity",
                      name, "leaseDurationSeconds", 40, "renewTime", now);
        json_decref(now);
        ks_store_create(KS_RT_LEASES, lease, NULL);
    }
}

int ks_nodes_load(const char *file)
{
    json_error_t je;
    json_t *doc = NULL;
    if (file && file[0]) {
        doc = json_load_file(file, 0, &je);
        if (!doc) {
            fprintf(stderr, "kubesim: nodes file %s: %s (line %d)\n", file, je.text, je.line);
            return -1;
        }
    } else {
        doc = json_loads(default_nodes, 0, &je);
    }
    json_t *list = json_is_array(doc) ? doc : json_object_get(doc, "nodes");
    size_t i;
    json_t *spec;
    json_array_foreach(list, i, spec)
    {
        const char *name = ks_jstr(spec, "name");
        long long count = ks_jint(spec, "count", 1);
        const char *prefix = ks_jstr(spec, "namePrefix");
        if (name && count <= 1) {
            make_node(name, spec);
            continue;
        }
        for (long long k = 1; k <= count; k++) {
            char nm[256];
            snprintf(nm, sizeof(nm), "%s%lld", prefix ? prefix : (name ? name : "node-"), k);
            make_node(nm, spec);
        }
    }
    json_decref(doc);
    return 0;
}

int ks_node_set_condition(const char *name, const char *type, const char *status,
                          const char *reason, const char *msg)
{
    json_t *n = ks_store_copy(KS_RT_NODES, NULL, name);
    if (!n)
        return -1;
    ks_cond_set(ks_jobj(n, "status"), type, status, reason ? reason : type, msg ? msg : "", 0);
    /* The node lifecycle controller taints NotReady nodes. */
    if (!strcmp(type, "Ready")) {
        json_t *taints = ks_jget(n, "spec.taints");
        for (size_t i = json_array_size(taints); i-- > 0;)
            if (ks_streq(ks_jstr(json_array_get(taints, i), "key"), "node.kubernetes.io/not-ready"))
                json_array_remove(taints, i);
        if (strcmp(status, "True")) {
            if (!json_is_array(taints)) {
                taints = json_array();
                ks_jset(n, "spec.taints", taints);
            }
            json_array_append_new(taints,
                                  json_pack("{s:s,s:s}", "key", "node.kubernetes.io/not-ready",
                                            "effect", "NoExecute"));
        }
    }
    ks_store_update(KS_RT_NODES, n, NULL);
    return 0;
}

int ks_node_set_unschedulable(const char *name, int on)
{
    json_t *n = ks_store_copy(KS_RT_NODES, NULL, name);
    if (!n)
        return -1;
    if (on)
        ks_jset(n, "spec.unschedulable", json_true());
    else
        ks_jdel(n, "spec.unschedulable");
    ks_store_update(KS_RT_NODES, n, NULL);
    return 0;
}
