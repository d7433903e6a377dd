/** The `runtime/` stage: a fresh, prepared workspace per job (on this machine; src/runtime/docker/ puts a container around it), and artifact collection. */
export {
  createWorkspace,
  WorkspaceError,
  workspaceEnv,
  type Workspace,
} from './workspace.js';
export { collectArtifacts } from './artifacts.js';
export {
  snapshotWorkspace,
  diffSnapshots,
  saveChanges,
  type WorkspaceChanges,
} from './changes.js';
