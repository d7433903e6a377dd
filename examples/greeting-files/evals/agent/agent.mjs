#!/usr/bin/env node
// A tiny deterministic "agent" for the example suite. It reads skill-up's SessionInput,
// creates the file the prompt asks for and answers with a SessionResult on stdout.
// When the greeting-files skill is installed in its workspace it reads SKILL.md and follows
// the house style; without it, it writes a plain greeting. That difference is what the
// with_skill / without_skill comparison of the example measures.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const input = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const prompt = input.messages.at(-1).content;
const file = /create\s+(\S+\.\w+)/i.exec(prompt)?.[1];
const greeting = /saying\s+"([^"]+)"/i.exec(prompt)?.[1] ?? 'Hello';
const skillMd = join(input.workspace, '.agents/skills/greeting-files/SKILL.md');
const toolCalls = [];
const result = (final_message) =>
  process.stdout.write(JSON.stringify({ exit_code: 0, final_message, tool_calls: toolCalls, skills_used: skillsUsed, input_tokens: prompt.length, output_tokens: final_message.length }));

const skillsUsed = [];
if (!file) {
  result('I cannot tell which file to create.');
  process.exit(0);
}
let text = `${greeting}\n`;
let answer = `Created ${file}.`;
if (existsSync(skillMd)) {
  const skill = readFileSync(skillMd, 'utf8');
  toolCalls.push({ name: 'read_file', input: { path: skillMd }, output: `${skill.length} bytes` });
  skillsUsed.push('greeting-files');
  const marker = /Start the file with the line `([^`]+)`/.exec(skill)?.[1];
  text = `${marker}\n${greeting.replace(/[.!]?$/, '!')}\n`;
  answer = `Created ${file} in house style.`;
}
writeFileSync(join(input.workspace, file), text);
toolCalls.push({ name: 'write_file', input: { path: file, content: text } });
result(answer);
