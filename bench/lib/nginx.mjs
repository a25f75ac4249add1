// nginx `proxy_pass` to the same upstream (one worker, upstream keep-alive), when nginx is
// installed; the proxied read's baseline.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcess, SERVICE_CPU } from './processes.mjs';

const BINARY = ['/usr/sbin/nginx', 'nginx'].find((bin) => !spawnSync(bin, ['-v']).error);
export const NGINX = BINARY !== undefined;

export function startNginx({ port, upstream }) {
  const prefix = mkdtempSync(join(tmpdir(), 'bench-nginx-'));
  mkdirSync(join(prefix, 'logs'));
  const target = new URL(upstream);
  const conf = `
worker_processes 1;
daemon off;
master_process on;
pid ${prefix}/nginx.pid;
error_log ${prefix}/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${prefix}/body; proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fcgi; uwsgi_temp_path ${prefix}/uwsgi; scgi_temp_path ${prefix}/scgi;
  keepalive_requests 1000000;
  upstream fast { server ${target.hostname}:${target.port}; keepalive 64; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://fast;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}`;
  writeFileSync(join(prefix, 'nginx.conf'), conf);
  return startProcess({
    name: 'nginx',
    command: BINARY,
    args: ['-p', prefix, '-c', join(prefix, 'nginx.conf')],
    cpu: SERVICE_CPU,
  });
}
