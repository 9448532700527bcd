// The one certificate the cluster needs beyond what its components make for themselves: the API
// server's client certificate for the kubelet's API (logs, exec, port-forward), from a CA of the
// cluster's own that the kubelet trusts. Everything else authenticates with tokens (tokens.csv).
import { execFileSync } from 'node:child_process';
import path from 'node:path';

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
