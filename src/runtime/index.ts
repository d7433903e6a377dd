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
  noChanges,
  saveChanges,
  readSavedChanges,
  restoreChanges,
  type WorkspaceChanges,
  type WorkspaceSnapshot,
  type SavedChanges,
} from './changes.js';
