import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { humanBytes } from './human-bytes.js';

/** The request line and headers a client may send the gateway (Node's own default). */
export const PUBLIC_MAX_HEADER_BYTES = 16 * 1024;

/**
 * What a service behind the gateway accepts: the gateway's signed assertion repeats the path and
 * query (in base64url, a third longer), so every call the gateway took must still fit here.
 */
export const SERVICE_MAX_HEADER_BYTES = 64 * 1024;

function answer(status: number, reason: string, body: object | null, requestId: string): string {
  const json = body ? JSON.stringify(body) : '';
  return (
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nX-Request-Id: ${requestId}\r\n` +
    (json
      ? `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(json)}\r\n`
      : 'Content-Length: 0\r\n') +
    `\r\n${json}`
  );
}

const envelope = (code: string, message: string, requestId: string) => ({
  success: false,
  error: { code, message, requestId },
});

/**
 * What the HTTP parser refuses before fastify sees a request, in the error envelope like every
 * other answer (fastify's default writes a JSON shape of its own): a request line and headers
 * over `maxHeaderBytes` is 431 HEADERS_TOO_LARGE, bytes that are not HTTP a 400. A request that
 * did not arrive in time gets 408 without a body, as Node answers it.
 */
export function clientErrorHandler(maxHeaderBytes: number) {
  return function onClientError(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Duplex): void {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const requestId = randomUUID();
    let response: string;
    if (err.code === 'HPE_HEADER_OVERFLOW') {
      const message =
        `The request line and headers exceed ${humanBytes(maxHeaderBytes)}: ` +
        'send fewer or shorter query parameters and headers';
      response = answer(
        431,
        'Request Header Fields Too Large',
        envelope('HEADERS_TOO_LARGE', message, requestId),
        requestId,
      );
    } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      response = answer(408, 'Request Timeout', null, requestId);
    } else {
      const message = 'The request is not valid HTTP/1.1';
      response = answer(400, 'Bad Request', envelope('VALIDATION_ERROR', message, requestId), requestId);
    }
    this.log.debug({ err, requestId }, 'client error before a request');
    if (socket.writable) socket.write(response);
    socket.destroy(err);
  };
}
