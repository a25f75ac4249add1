/**
 * multipart/form-data parsing with busboy. The body is already buffered (it is recorded in
 * `received` whatever the route answers), so the parser is fed from memory.
 */
import type { IncomingHttpHeaders } from 'node:http';
import busboy from 'busboy';
import type { ReceivedPart } from './types.js';

export class MultipartError extends Error {}

export function parseMultipart(headers: IncomingHttpHeaders, body: Buffer): Promise<ReceivedPart[]> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      // No size limits: the proxy enforces them, and the sandbox must show exactly what it got.
      parser = busboy({ headers, limits: { fieldSize: Infinity, fileSize: Infinity } });
    } catch (error) {
      reject(new MultipartError((error as Error).message));
      return;
    }
    // Parts are stored by arrival index because file streams may finish after later fields.
    const parts: ReceivedPart[] = [];
    let pendingFiles = 0;
    let parserDone = false;
    const finish = () => {
      if (parserDone && pendingFiles === 0) resolve(parts);
    };
    parser.on('field', (name, value, info) => {
      parts.push({ name, contentType: info.mimeType, content: Buffer.from(value, 'utf8') });
    });
    parser.on('file', (name, stream, info) => {
      const part: ReceivedPart = {
        name,
        filename: info.filename,
        contentType: info.mimeType,
        content: Buffer.alloc(0),
      };
      parts.push(part);
      pendingFiles++;
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        part.content = Buffer.concat(chunks);
        pendingFiles--;
        finish();
      });
    });
    parser.on('close', () => {
      parserDone = true;
      finish();
    });
    parser.on('error', (error: unknown) => reject(new MultipartError((error as Error).message)));
    parser.end(body);
  });
}
