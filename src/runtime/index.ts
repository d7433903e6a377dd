/** The `runtime/` stage (local): a fresh, prepared workspace per job, and artifact collection. */
export {
  createWorkspace,
  WorkspaceError,
  type Workspace,
} from './workspace.js';
export { collectArtifacts } from './artifacts.js';
export {
  snapshotWorkspace,
  diffSnapshots,
  saveChanges,
  type WorkspaceChanges,
} from './changes.js';
