#!/usr/bin/env node
// Validate Kubernetes objects (kustomize output, multi-document YAML or JSON)
// against the real schemas in $TAUGATE_SHARED/k8s-schemas (default: ../shared
// next to the repository), with Ajv, as reference/k8s-api.md section 7 says:
//   - core/v1 (Namespace, ServiceAccount, ConfigMap, Secret, Service, and the
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
// integer-or-string and CRD defaults are applied before `required`. Names,
// label keys and values are checked too (the schemas cannot say them).
//
// Usage: node validate-k8s.js FILE...   (- reads stdin)
// Exit status 0 when every object is valid, 1 otherwise (reasons on stderr),
// 2 on a usage or setup error.
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
// rbac names are path segments: anything but '/', '%' and "." or "..".
const PATH_SEGMENT = /^(?!\.\.?$)[^/%]+$/;

function labelKeyOk(k) {
  const i = k.lastIndexOf('/');
  const name = i < 0 ? k : k.slice(i + 1);
  const prefix = i < 0 ? null : k.slice(0, i);
  if (!name || name.length > 63 || !LABEL_NAME.test(name)) return false;
  return prefix === null || (prefix.length <= 253 && DNS_SUBDOMAIN.test(prefix));
}

const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding']);

function checkMeta(m, entry, errs) {
  const md = m.metadata;
  if (!md || !md.name) return errs.push('metadata.name is required');
  const kind = m.kind;
  let ok;
  if (kind === 'Namespace' || kind === 'Service') ok = md.name.length <= 63 && (kind === 'Service' ? DNS_1035 : DNS_LABEL).test(md.name);
  else if (/^rbac\./.test(m.apiVersion)) ok = PATH_SEGMENT.test(md.name);
  else ok = md.name.length <= 253 && DNS_SUBDOMAIN.test(md.name);
  if (!ok) errs.push(`metadata.name "${md.name}" is not a valid ${kind} name`);
  const clusterScoped = entry.crd ? !entry.namespaced : CLUSTER_SCOPED.has(kind);
  if (clusterScoped && md.namespace) errs.push(`${kind} is cluster-scoped but has metadata.namespace`);
  if (!clusterScoped && md.namespace !== undefined && !DNS_LABEL.test(md.namespace)) errs.push('metadata.namespace must be a DNS-1123 label');
  for (const [k, val] of Object.entries(md.labels || {})) {
    if (!labelKeyOk(k)) errs.push(`label key "${k}" is invalid`);
    if (typeof val !== 'string' || (val !== '' && (val.length > 63 || !LABEL_NAME.test(val)))) errs.push(`label ${k}="${val}" has an invalid value`);
  }
  for (const k of Object.keys(md.annotations || {})) {
    if (!labelKeyOk(k)) errs.push(`annotation key "${k}" is invalid`);
  }
}

const QUANTITY = /^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+|[KMGTPE]i|[mkMGTPE])?$/;

// Container resources must be quantities (the schema accepts any string).
function checkQuantities(node, where, errs) {
  if (Array.isArray(node)) return node.forEach((x, i) => checkQuantities(x, `${where}[${i}]`, errs));
  if (!node || typeof node !== 'object') return;
  for (const [k, val] of Object.entries(node)) {
    if (k === 'resources' && val && typeof val === 'object' && !Array.isArray(val)) {
      for (const part of ['requests', 'limits']) {
        for (const [r, q] of Object.entries(val[part] || {})) {
          if (!QUANTITY.test(String(q))) errs.push(`${where}.resources.${part}.${r}: "${q}" is not a quantity`);
        }
      }
    }
    checkQuantities(val, `${where}.${k}`, errs);
  }
}

// What an apiserver checks on top of the schemas, for the kinds at hand.
function checkSemantics(m, errs) {
  checkQuantities(m.spec, 'spec', errs);
  const sel = m.spec && m.spec.selector && m.spec.selector.matchLabels;
  if (m.kind === 'Deployment') {
    const labels = (m.spec.template.metadata && m.spec.template.metadata.labels) || {};
    for (const [k, val] of Object.entries(sel || {})) {
      if (labels[k] !== val) errs.push(`spec.selector does not match the template's labels (${k})`);
    }
    const pod = m.spec.template.spec || {};
    if (pod.restartPolicy && pod.restartPolicy !== 'Always') errs.push('a Deployment\'s pods must have restartPolicy Always');
  }
  if (m.kind === 'Job') {
    const rp = m.spec && m.spec.template && m.spec.template.spec && m.spec.template.spec.restartPolicy;
    if (!['Never', 'OnFailure'].includes(rp)) errs.push('a Job\'s pods need restartPolicy Never or OnFailure');
  }
  if (m.kind === 'NetworkPolicy') {
    const CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;
    const SVC_NAME = /^(?=.*[a-z])[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
    const rules = [...(m.spec.ingress || []).map((r) => [r.from, r.ports]),
                   ...(m.spec.egress || []).map((r) => [r.to, r.ports])];
    for (const [peers, ports] of rules) {
      for (const p of peers || []) {
        const c = p.ipBlock && CIDR.exec(p.ipBlock.cidr);
        if (p.ipBlock && (!c || c.slice(1, 5).some((o) => +o > 255) || +c[5] > 32)) errs.push(`ipBlock.cidr "${p.ipBlock.cidr}" is not an IPv4 CIDR`);
        if (p.ipBlock && (p.podSelector || p.namespaceSelector)) errs.push('a peer has ipBlock and a selector');
      }
      for (const p of ports || []) {
        if (typeof p.port === 'string' && (p.port.length > 15 || !SVC_NAME.test(p.port))) errs.push(`port "${p.port}" is not a valid port name`);
        if (typeof p.port === 'number' && (p.port < 1 || p.port > 65535)) errs.push(`port ${p.port} is out of range`);
      }
    }
  }
  if (m.kind === 'Secret' && m.stringData) {
    for (const k of Object.keys(m.stringData)) if (!/^[-._a-zA-Z0-9]+$/.test(k)) errs.push(`Secret key "${k}" is invalid`);
  }
  if (m.kind === 'ConfigMap' && m.data) {
    for (const k of Object.keys(m.data)) if (!/^[-._a-zA-Z0-9]+$/.test(k)) errs.push(`ConfigMap key "${k}" is invalid`);
  }
}

function checkOne(v, m) {
  if (!m || typeof m !== 'object') return ['not an object'];
  const key = `${m.apiVersion}/${m.kind}`;
  const entry = v.get(key);
  if (!entry) return [`no schema for ${key}`];
  const errs = [];
  const doc = JSON.parse(JSON.stringify(m));
  if (!entry.validate(doc)) {
    for (const e of entry.validate.errors) {
      const extra = e.params && e.params.additionalProperty ? ` (${e.params.additionalProperty})` : '';
      errs.push(`schema: ${e.instancePath || '/'} ${e.message}${extra}`);
    }
  }
  if (entry.crd && !v.objectMeta(JSON.parse(JSON.stringify(m.metadata || {})))) {
    for (const e of v.objectMeta.errors) errs.push(`metadata: ${e.instancePath || '/'} ${e.message}`);
  }
  checkMeta(m, entry, errs);
  if (!errs.length) checkSemantics(m, errs);
  return errs;
}

function readObjects(file) {
  const text = fs.readFileSync(file === '-' ? 0 : file, 'utf8');
  const out = [];
  for (const d of yaml.loadAll(text)) {
    if (d === null || d === undefined) continue;
    if (Array.isArray(d)) out.push(...d);
    else if (d.kind === 'List' && Array.isArray(d.items)) out.push(...d.items);
    else out.push(d);
  }
  return out;
}

function main(argv) {
  if (argv.length === 0) {
    console.error('usage: validate-k8s.js FILE...');
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
      const errs = checkOne(v, m);
      if (errs.length) {
        bad++;
        console.error(`FAIL ${id}`);
        for (const e of errs) console.error(`  ${e}`);
      } else {
        const how = v.get(`${m.apiVersion}/${m.kind}`).supplement ? ' (own fields: transcribed schema)' : '';
        console.log(`ok   ${id}${how}`);
      }
    }
  }
  console.log(`${total - bad}/${total} objects valid`);
  return bad ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
