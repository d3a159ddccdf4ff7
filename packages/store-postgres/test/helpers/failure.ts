/** The error a promise rejects with (null when it resolves), typed loosely enough to match a WorkflowError's fields. */
export const failure = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e as { name?: string; code?: string; message?: string; details?: Record<string, unknown> },
  );
