/** skill-up's own version, read from package.json at the package root. */
import { readFileSync } from 'node:fs';
import { packageRoot } from './package-root.js';
import { join } from 'node:path';

export const VERSION: string = (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
