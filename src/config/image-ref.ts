/** Docker image references as eval.yaml's `environment.image` and `engines check --image` take them. */

/**
 * Why `ref` is not an image reference Docker accepts (`[host[:port]/]name[/name…][:tag][@sha256:…]`,
 * lower-case names; or an image id), or undefined when it is. Checked before it reaches the
 * daemon: dockerode puts it into a request path, where `../` would redirect the request elsewhere.
 * Source: the distribution project's reference grammar (github.com/distribution/reference).
 */
export function imageReferenceProblem(ref: string): string | undefined {
  if (ref.length > 255) return 'is longer than 255 characters';
  if (/^(sha256:)?[a-f0-9]{12,64}$/.test(ref)) return undefined;
  let rest = ref;
  const at = rest.indexOf('@');
  if (at >= 0) {
    if (!/^sha256:[a-f0-9]{64}$/.test(rest.slice(at + 1))) return 'has a digest that is not `sha256:` and 64 hex digits';
    rest = rest.slice(0, at);
  }
  const parts = rest.split('/');
  const last = parts[parts.length - 1]!;
  const colon = last.indexOf(':');
  if (colon >= 0) {
    if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(last.slice(colon + 1))) return 'has a tag that is not letters, digits, `_`, `.` or `-` (at most 128)';
    parts[parts.length - 1] = last.slice(0, colon);
  }
  // A first part with a `.` or `:` or `localhost` is a registry host[:port].
  if (parts.length > 1 && /[.:]|^localhost$/.test(parts[0]!)) {
    if (!/^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:[0-9]{1,5})?$/.test(parts.shift()!)) return 'has a registry host that is not a host name with an optional port';
  }
  // Separator runs and name runs are disjoint classes: linear to match.
  for (const p of parts) if (!/^[a-z0-9]+([._-]+[a-z0-9]+)*$/.test(p)) return `has a name part \`${p}\` that is not lower-case letters and digits joined by \`.\`, \`_\` or \`-\``;
  return undefined;
}
