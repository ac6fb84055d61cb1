// The real Kubernetes, Kueue and KubeRay schemas in
// $TAUGATE_SHARED/k8s-schemas (default: ../shared next to the repository),
// compiled with Ajv as reference/k8s-api.md section 7 says, for the two
// validators (validate-k8s.js: the deployment's objects; validate-manifests.js:
// what the gateway renders for a run):
//   - core/v1 (Namespace, ServiceAccount, ConfigMap, Secret, Service, Pod, and the
//     ObjectMeta, PodTemplateSpec and LabelSelector of everything):
//     kubernetes-v1.32/api__v1_openapi.json
//   - batch/v1 Job: kubernetes-v1.32/apis__batch__v1_openapi.json
//   - kueue.x-k8s.io/v1beta1 ResourceFlavor, ClusterQueue, LocalQueue,
//     WorkloadPriorityClass, Workload: the Kueue v0.14.8 CRDs (version v1beta1)
//   - ray.io/v1 RayJob, RayCluster: the KubeRay v1.7.0 CRDs (version v1)
// The folder has no documents for apps/v1, policy/v1, networking.k8s.io/v1
// and rbac.authorization.k8s.io/v1. For Deployment, PodDisruptionBudget,
// NetworkPolicy, ClusterRole, ClusterRoleBinding, Role and RoleBinding the object's own
// fields are checked by the closed schemas below (transcribed from the
// Kubernetes 1.32 API reference) while everything they embed (ObjectMeta,
// PodTemplateSpec, LabelSelector, IntOrString) is checked against the real
// core/v1 document.
// Like fieldValidation=Strict, every object schema that lists properties is
// closed (an unknown field is an error); x-kubernetes-int-or-string becomes
// integer-or-string and CRD defaults are applied before `required`.
'use strict';

const fs = require('fs');
const path = require('path');
const Ajv = require('ajv');
const addFormats = require('ajv-formats');
const yaml = require('js-yaml');

const repo = path.resolve(__dirname, '..', '..');
const shared = process.env.TAUGATE_SHARED || path.join(path.dirname(repo), 'shared');
const schemaDir = path.join(shared, 'k8s-schemas');

// Close object schemas and translate Kubernetes extensions, in place.
function prepare(node) {
  if (Array.isArray(node)) {
    node.forEach(prepare);
    return node;
  }
  if (!node || typeof node !== 'object') return node;
  if (node['x-kubernetes-int-or-string'] === true) {
    delete node.type;
    node.anyOf = [{ type: 'integer' }, { type: 'string' }];
  }
  if (node.properties && node.additionalProperties === undefined &&
      !node['x-kubernetes-preserve-unknown-fields']) {
    node.additionalProperties = false;
  }
  for (const k of Object.keys(node)) prepare(node[k]);
  return node;
}

function makeAjv(useDefaults) {
  const ajv = new Ajv({ strict: false, allErrors: true, useDefaults, validateFormats: true });
  addFormats(ajv);
  ajv.addFormat('int32', { type: 'number', validate: (n) => Number.isInteger(n) && n >= -2147483648 && n <= 2147483647 });
  ajv.addFormat('int64', { type: 'number', validate: (n) => Number.isInteger(n) });
  ajv.addFormat('int-or-string', true);
  ajv.addFormat('double', true);
  ajv.addFormat('byte', { type: 'string', validate: (s) => /^[A-Za-z0-9+/]*={0,2}$/.test(s) });
  return ajv;
}

const CORE = 'core.json#/components/schemas/';
const meta = { $ref: `${CORE}io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta` };
const selector = { $ref: `${CORE}io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector` };
const intOrString = { $ref: `${CORE}io.k8s.apimachinery.pkg.util.intstr.IntOrString` };
const str = { type: 'string' };
const strs = { type: 'array', items: str };
const int32 = { type: 'integer', minimum: -2147483648, maximum: 2147483647 };
const typeMeta = (apiVersion, kind) => ({
  apiVersion: { const: apiVersion },
  kind: { const: kind },
  metadata: meta,
});
const closed = (required, properties) => ({ type: 'object', additionalProperties: false, required, properties });

// apps/v1, policy/v1 and rbac.authorization.k8s.io/v1, Kubernetes 1.32.
const policyRule = closed(['verbs'], {
  apiGroups: strs, resources: strs, resourceNames: strs, nonResourceURLs: strs,
  verbs: { type: 'array', items: str, minItems: 1 },
});
const roleRef = closed(['apiGroup', 'kind', 'name'], { apiGroup: str, kind: { enum: ['Role', 'ClusterRole'] }, name: str });
const subject = closed(['kind', 'name'], { apiGroup: str, kind: { enum: ['User', 'Group', 'ServiceAccount'] }, name: str, namespace: str });
const netPeer = closed([], {
  podSelector: selector,
  namespaceSelector: selector,
  ipBlock: closed(['cidr'], { cidr: str, except: strs }),
});
const netPort = closed([], {
  protocol: { enum: ['TCP', 'UDP', 'SCTP'] },
  port: intOrString,
  endPort: int32,
});
const SUPPLEMENT = {
  'networking.k8s.io/v1/NetworkPolicy': closed(['apiVersion', 'kind', 'metadata', 'spec'], {
    ...typeMeta('networking.k8s.io/v1', 'NetworkPolicy'),
    spec: closed(['podSelector'], {
      podSelector: selector,
      policyTypes: { type: 'array', items: { enum: ['Ingress', 'Egress'] } },
      ingress: { type: 'array', items: closed([], { from: { type: 'array', items: netPeer }, ports: { type: 'array', items: netPort } }) },
      egress: { type: 'array', items: closed([], { to: { type: 'array', items: netPeer }, ports: { type: 'array', items: netPort } }) },
    }),
  }),
  'apps/v1/Deployment': closed(['apiVersion', 'kind', 'metadata', 'spec'], {
    ...typeMeta('apps/v1', 'Deployment'),
    spec: closed(['selector', 'template'], {
      replicas: { ...int32, minimum: 0 },
      selector,
      template: { $ref: `${CORE}io.k8s.api.core.v1.PodTemplateSpec` },
      strategy: closed([], {
        type: { enum: ['Recreate', 'RollingUpdate'] },
        rollingUpdate: closed([], { maxUnavailable: intOrString, maxSurge: intOrString }),
      }),
      minReadySeconds: { ...int32, minimum: 0 },
      revisionHistoryLimit: { ...int32, minimum: 0 },
      paused: { type: 'boolean' },
      progressDeadlineSeconds: { ...int32, minimum: 1 },
    }),
    status: { type: 'object' },
  }),
  'policy/v1/PodDisruptionBudget': closed(['apiVersion', 'kind', 'metadata', 'spec'], {
    ...typeMeta('policy/v1', 'PodDisruptionBudget'),
    spec: {
      ...closed([], {
        minAvailable: intOrString,
        maxUnavailable: intOrString,
        selector,
        unhealthyPodEvictionPolicy: { enum: ['IfHealthyBudget', 'AlwaysAllow'] },
      }),
      not: { required: ['minAvailable', 'maxUnavailable'] },
    },
    status: { type: 'object' },
  }),
  'rbac.authorization.k8s.io/v1/ClusterRole': closed(['apiVersion', 'kind', 'metadata'], {
    ...typeMeta('rbac.authorization.k8s.io/v1', 'ClusterRole'),
    rules: { type: 'array', items: policyRule },
    aggregationRule: closed([], { clusterRoleSelectors: { type: 'array', items: selector } }),
  }),
  'rbac.authorization.k8s.io/v1/Role': closed(['apiVersion', 'kind', 'metadata'], {
    ...typeMeta('rbac.authorization.k8s.io/v1', 'Role'),
    rules: { type: 'array', items: policyRule },
  }),
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': closed(['apiVersion', 'kind', 'metadata', 'roleRef'], {
    ...typeMeta('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding'),
    roleRef,
    subjects: { type: 'array', items: subject },
  }),
  'rbac.authorization.k8s.io/v1/RoleBinding': closed(['apiVersion', 'kind', 'metadata', 'roleRef'], {
    ...typeMeta('rbac.authorization.k8s.io/v1', 'RoleBinding'),
    roleRef,
    subjects: { type: 'array', items: subject },
  }),
};

const CORE_KINDS = ['Namespace', 'ServiceAccount', 'ConfigMap', 'Secret', 'Service', 'Pod'];
const CRDS = [
  ['kueue-v0.14.8/kueue.x-k8s.io_resourceflavors.yaml', 'v1beta1'],
  ['kueue-v0.14.8/kueue.x-k8s.io_clusterqueues.yaml', 'v1beta1'],
  ['kueue-v0.14.8/kueue.x-k8s.io_localqueues.yaml', 'v1beta1'],
  ['kueue-v0.14.8/kueue.x-k8s.io_workloadpriorityclasses.yaml', 'v1beta1'],
  ['kueue-v0.14.8/kueue.x-k8s.io_workloads.yaml', 'v1beta1'],
  ['kuberay-v1.7.0/ray.io_rayjobs.yaml', 'v1'],
  ['kuberay-v1.7.0/ray.io_rayclusters.yaml', 'v1'],
];

// Validators are compiled on first use: the CRDs are large (the RayJob CRD
// alone is 1.4 MB), and a manifest set uses a few kinds.
function loadValidators() {
  const read = (p) => JSON.parse(fs.readFileSync(path.join(schemaDir, p), 'utf8'));
  const ajv = makeAjv(false);
  const core = prepare(read('kubernetes-v1.32/api__v1_openapi.json'));
  const batch = prepare(read('kubernetes-v1.32/apis__batch__v1_openapi.json'));
  // The documents are OpenAPI, not schemas: register only their components.
  ajv.addSchema({ $id: 'core.json', components: core.components });
  ajv.addSchema({ $id: 'batch.json', components: batch.components });
  const makers = {};
  for (const kind of CORE_KINDS) {
    makers[`v1/${kind}`] = () => ({ validate: ajv.compile({ $ref: `${CORE}io.k8s.api.core.v1.${kind}` }) });
  }
  makers['batch/v1/Job'] = () => ({ validate: ajv.compile({ $ref: 'batch.json#/components/schemas/io.k8s.api.batch.v1.Job' }) });
  for (const [key, schema] of Object.entries(SUPPLEMENT)) {
    makers[key] = () => ({ validate: ajv.compile(schema), supplement: true });
  }
  const crdAjv = makeAjv(true);
  for (const [file, version] of CRDS) {
    // spec.group and spec.names.kind, read without parsing the whole CRD
    const crdPath = path.join(schemaDir, file);
    const head = fs.readFileSync(crdPath, 'utf8');
    const group = /\n  group: (\S+)/.exec(head)[1];
    const kind = /\n    kind: (\S+)/.exec(head)[1];
    makers[`${group}/${version}/${kind}`] = () => {
      const crd = yaml.load(head);
      const ver = crd.spec.versions.find((x) => x.name === version);
      const schema = prepare(JSON.parse(JSON.stringify(ver.schema.openAPIV3Schema)));
      return { validate: crdAjv.compile(schema), crd: true, namespaced: crd.spec.scope === 'Namespaced' };
    };
  }
  const cache = new Map();
  return {
    objectMeta: ajv.compile(meta),
    get(key) {
      if (!cache.has(key)) cache.set(key, makers[key] ? makers[key]() : null);
      return cache.get(key);
    },
  };
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

function labelKeyOk(k) {
  const i = k.lastIndexOf('/');
  const name = i < 0 ? k : k.slice(i + 1);
  const prefix = i < 0 ? null : k.slice(0, i);
  if (!name || name.length > 63 || !LABEL_NAME.test(name)) return false;
  return prefix === null || (prefix.length <= 253 && DNS_SUBDOMAIN.test(prefix));
}


// The schema's complaints about `m` (and, for a custom resource, those of the
// real ObjectMeta about its metadata), as lines; `entry` is v.get(key).
function schemaErrors(v, entry, m) {
  const errs = [];
  if (!entry.validate(JSON.parse(JSON.stringify(m)))) {
    for (const e of entry.validate.errors) {
      const extra = e.params && e.params.additionalProperty ? ` (${e.params.additionalProperty})` : '';
      errs.push(`schema: ${e.instancePath || '/'} ${e.message}${extra}`);
    }
  }
  if (entry.crd && !v.objectMeta(JSON.parse(JSON.stringify(m.metadata || {})))) {
    for (const e of v.objectMeta.errors) errs.push(`metadata: ${e.instancePath || '/'} ${e.message}`);
  }
  return errs;
}

// Labels and annotations of `md` checked as the API server does.
function checkLabels(md, errs) {
  for (const [k, val] of Object.entries(md.labels || {})) {
    if (!labelKeyOk(k)) errs.push(`label key "${k}" is invalid`);
    if (typeof val !== 'string' || (val !== '' && (val.length > 63 || !LABEL_NAME.test(val)))) errs.push(`label ${k}="${val}" has an invalid value`);
  }
  for (const k of Object.keys(md.annotations || {})) {
    if (!labelKeyOk(k)) errs.push(`annotation key "${k}" is invalid`);
  }
}

// The command line of both validators: every object of every FILE (read by
// readObjects) checked by checkOne(v, m) -> [reason...]; "ok"/"FAIL" lines,
// then a count. Exit status 0 when every object is valid, 1 otherwise, 2 on a
// usage or setup error.
function runValidator(argv, usage, noun, readObjects, checkOne, note = () => '') {
  if (argv.length === 0) {
    console.error(`usage: ${usage} FILE...`);
    return 2;
  }
  let v;
  try {
    v = loadValidators();
  } catch (e) {
    console.error(`cannot load schemas from ${schemaDir}: ${e.message}`);
    return 2;
  }
  let bad = 0;
  let total = 0;
  for (const file of argv) {
    let objs;
    try {
      objs = readObjects(file);
    } catch (e) {
      console.error(`FAIL ${file}: ${e.message}`);
      bad++;
      continue;
    }
    for (const m of objs) {
      total++;
      const id = `${file}: ${m && m.apiVersion} ${m && m.kind}/${m && m.metadata && m.metadata.name}`;
      const errs = m && typeof m === 'object' ? checkOne(v, m) : ['not an object'];
      if (errs.length) {
        bad++;
        console.error(`FAIL ${id}`);
        for (const e of errs) console.error(`  ${e}`);
      } else {
        console.log(`ok   ${id}${note(v, m)}`);
      }
    }
  }
  console.log(`${total - bad}/${total} ${noun} valid`);
  return bad ? 1 : 0;
}

module.exports = {
  schemaDir, loadValidators, schemaErrors, checkLabels, labelKeyOk, runValidator,
  DNS_LABEL, DNS_1035, DNS_SUBDOMAIN, LABEL_NAME,
};
