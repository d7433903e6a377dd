/** The credential detector used on a custom engine's command line and URL. */
import { describe, expect, it } from 'vitest';
import { credentialReferences, literalCredential, looksLikeCredentialName } from '../../src/config/secrets.js';

describe('literalCredential', () => {
  it.each([
    ['sk-ant-api03-AbCdEf12', 'Anthropic'],
    ['Bearer sk-proj-1234567890abcdef', 'API key (`sk-…`)'],
    ['ghp_0123456789abcdefABCDEF', 'GitHub token'],
    ['gho_0123456789abcdef', 'GitHub token'],
    ['github_pat_11AAAAAAA0123456789', 'github_pat_'],
    ['AIzaSyD-0123456789abcdefghijklmno', 'Google'],
    ['AKIAIOSFODNN7EXAMPLE', 'AWS'],
    ['xoxb-123456789012-abcdef', 'Slack'],
    ['xoxp-123456789012-abcdef', 'Slack'],
    ['eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U', 'JSON Web Token'],
  ])('%s is %s', (text, kind) => {
    expect(literalCredential(text)).toContain(kind);
  });

  it.each(['./agent.sh', '--task-list', 'sk-my-agent-name', 'risk-assessment', '${MY_TOKEN}', 'https://example.com/run', 'eyJ.not.a.jwt', 'AKIA'])(
    '%s is not a credential',
    (text) => {
      expect(literalCredential(text)).toBeUndefined();
    },
  );
});

describe('credentialReferences', () => {
  it('finds ${api_key}, credential-named kwargs and environment references', () => {
    expect(credentialReferences('--key ${api_key} ${kwargs.token} ${kwargs.db_password} ${kwargs.apikey} ${GITHUB_TOKEN:-x} ${SECRET?set it}')).toEqual([
      '${api_key}',
      '${kwargs.token}',
      '${kwargs.db_password}',
      '${kwargs.apikey}',
      '${GITHUB_TOKEN:-x}',
      '${SECRET?set it}',
    ]);
  });

  it('ignores ordinary template variables and token counts', () => {
    expect(credentialReferences('${input_file} ${workspace} ${kwargs.profile} ${max_tokens} ${kwargs.token_limit} ${model}')).toEqual([]);
  });

  it('credential-like names', () => {
    expect(['token', 'API_KEY', 'apiKey', 'client_secret', 'PASSWORD', 'passwd'].every(looksLikeCredentialName)).toBe(true);
    expect(['profile', 'max_tokens', 'TOKENS_USED', 'region'].some(looksLikeCredentialName)).toBe(false);
  });
});
