/** Shared by the mocked MCP server tests: an SDK client on a mock, and the text of a tool answer. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { MockMcp } from '../../src/mcp/mock/server.js';

/** The SDK's own client connected in-process to a fresh SDK server of `mock`. */
export async function inMemoryClient(mock: MockMcp): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await mock.sdkServer().connect(serverSide);
  const client = new Client({ name: 'skill-up-test', version: '0' });
  await client.connect(clientSide);
  return client;
}

/** What a `tools/call` answered: its single text block and whether it is a tool error. */
export async function callText(client: Client, name: string, args: Record<string, unknown> = {}): Promise<{ text: string; isError: boolean }> {
  const r = await client.callTool({ name, arguments: args });
  const content = r.content as { type: string; text: string }[];
  if (content.length !== 1 || content[0]!.type !== 'text') throw new Error(`expected one text block, got ${JSON.stringify(r)}`);
  return { text: content[0]!.text, isError: r.isError === true };
}
