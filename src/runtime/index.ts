/** The `runtime/` stage (local): a fresh, prepared workspace per job, and artifact collection. */
export {
  createWorkspace,
  workspaceEnv,
  sanitiseId,
  WorkspaceError,
  GIT_IDENTITY,
  type Workspace,
  type WorkspaceStage,
  type CreateWorkspaceOptions,
} from './workspace.js';
export { collectArtifacts, MAX_ARTIFACT_BYTES, NEVER_COLLECTED, type CollectOptions } from './artifacts.js';
