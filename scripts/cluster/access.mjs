// Who is who in the cluster. Every component authenticates with a token of its own (tokens.csv):
// the kubelet as its node under the Node authorizer, the scheduler, controller manager and
// kube-proxy as their built-in users, CoreDNS and kube-router with read-only roles. The one
// certificate beyond what the components make for themselves is the API server's client
// certificate for the kubelet's API (logs, exec, port-forward), from a CA of the cluster's own
// that the kubelet trusts.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';

/** The components' users, each with a fresh token. */
export function componentUsers(c) {
  const user = (name, groups = []) => ({ user: name, groups, token: crypto.randomBytes(24).toString('hex') });
  return {
    kubelet: user(`system:node:${c.nodeName}`, ['system:nodes']),
    'kube-controller-manager': user('system:kube-controller-manager'),
    'kube-scheduler': user('system:kube-scheduler'),
    'kube-proxy': user('system:kube-proxy'),
    coredns: user('system:coredns'),
    'kube-router': user('system:kube-router'),
  };
}

const openssl = (args) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });

export function makeKubeletClientCert(dir) {
  const file = (name) => path.join(dir, name);
  openssl([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '30',
    '-subj',
    '/CN=support-desk-cluster-ca',
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.crt'),
  ]);
  openssl([
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/O=system:masters/CN=kube-apiserver-kubelet-client',
    '-keyout',
    file('kubelet-client.key'),
    '-out',
    file('kubelet-client.csr'),
  ]);
  openssl([
    'x509',
    '-req',
    '-in',
    file('kubelet-client.csr'),
    '-CA',
    file('ca.crt'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-days',
    '30',
    '-out',
    file('kubelet-client.crt'),
  ]);
  return { ca: file('ca.crt'), cert: file('kubelet-client.crt'), key: file('kubelet-client.key') };
}

/** A read-only role for a user of tokens.csv (CoreDNS, kube-router): what it watches. */
const readerRbac = (name, rules) => `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: '${name}' }
rules:
${rules.map(([group, resources]) => `  - { apiGroups: ['${group}'], resources: [${resources}], verbs: [get, list, watch] }`).join('\n')}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: '${name}' }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: '${name}' }
subjects: [{ apiGroup: rbac.authorization.k8s.io, kind: User, name: '${name}' }]
`;
export const RBAC = [
  readerRbac('system:coredns', [
    ['', 'endpoints, services, pods, namespaces'],
    ['discovery.k8s.io', 'endpointslices'],
  ]),
  readerRbac('system:kube-router', [
    ['', 'endpoints, services, pods, namespaces, nodes'],
    ['discovery.k8s.io', 'endpointslices'],
    ['networking.k8s.io', 'networkpolicies'],
  ]),
].join('---');
