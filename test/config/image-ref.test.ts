/** Docker image references (src/config/image-ref.ts): what Docker accepts passes, nothing that could leave the daemon's image path does. */
import { describe, expect, it } from 'vitest';
import { imageReferenceProblem } from '../../src/config/image-ref.js';

describe('imageReferenceProblem', () => {
  it.each([
    'node',
    'node:20',
    'node:20-bookworm-slim',
    'library/node:20.11.1',
    'ghcr.io/org/team/image:1.2.3',
    'localhost:5000/my_image',
    'registry.example.com:443/a.b/c-d__e:v1',
    `node@sha256:${'a'.repeat(64)}`,
    `ghcr.io/x/y:1@sha256:${'0'.repeat(64)}`,
    'sha256:' + 'f'.repeat(64),
    '0123456789ab',
    'skill-up-test/node:20',
  ])('accepts %s', (ref) => expect(imageReferenceProblem(ref)).toBeUndefined());

  it.each([
    ['../../127.0.0.1:8999/x', /registry host/],
    ['../../etc', /registry host/],
    ['a/../b', /name part `\.\.`/],
    ['x; rm -rf /', /name part|tag/],
    ['Node:20', /name part `Node`/],
    ['node:', /tag/],
    ['node:-x', /tag/],
    ['node@sha256:abc', /digest/],
    ['a//b', /name part ``/],
    ['/abs', /name part ``/],
    ['a/b/', /name part ``/],
    ['x'.repeat(256), /longer than 255/],
    ['ex ample.com/x', /registry host|name part/],
    ['host:99999999/x', /registry host/],
  ])('refuses %s', (ref, re) => expect(imageReferenceProblem(ref)).toMatch(re));
});
