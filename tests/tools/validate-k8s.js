#!/usr/bin/env node
// Validate Kubernetes objects (kustomize output, multi-document YAML or JSON)
// against the real schemas (see k8s-schemas.js for which document checks
// which kind). Names, label keys and values, quantities and what an API
// server checks on top of the schemas for the deployment's kinds are
// checked here too (the schemas cannot say them).
//
// Usage: node validate-k8s.js FILE...   (- reads stdin)
// Exit status 0 when every object is valid, 1 otherwise (reasons on stderr),
// 2 on a usage or setup error.
'use strict';

const fs = require('fs');
const yaml = require('js-yaml');
const {
  schemaErrors, checkLabels, runValidator, DNS_LABEL, DNS_1035, DNS_SUBDOMAIN,
} = require('./k8s-schemas');

// rbac names are path segments: anything but '/', '%' and "." or "..".
const PATH_SEGMENT = /^(?!\.\.?$)[^/%]+$/;

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
  checkLabels(md, errs);
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
  const key = `${m.apiVersion}/${m.kind}`;
  const entry = v.get(key);
  if (!entry) return [`no schema for ${key}`];
  const errs = schemaErrors(v, entry, m);
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

const ownFields = (v, m) => (v.get(`${m.apiVersion}/${m.kind}`).supplement ? ' (own fields: transcribed schema)' : '');

process.exitCode = runValidator(process.argv.slice(2), 'validate-k8s.js', 'objects', readObjects, checkOne, ownFields);
