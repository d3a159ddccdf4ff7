/**
 * The reference graph between workflows (key → referenced keys): cycles and the transitive removal of broken
 * workflows. Everything here is a set computation, so the outcome never depends on key order; iterative, so a
 * long reference chain cannot overflow the stack.
 */

/** key → (referenced key → index of the first phase that references it). */
export type ReferenceGraph = ReadonlyMap<string, ReadonlyMap<string, number>>;

/** Code-unit order: locale-independent and total, so every listing is reproducible. */
export function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function sortedTargets(graph: ReferenceGraph, key: string): string[] {
  return [...(graph.get(key)?.keys() ?? [])].filter((t) => graph.has(t)).sort(byCodeUnit);
}

interface Frame {
  readonly key: string;
  readonly targets: string[];
  next: number;
}

/** The strongly connected components that hold a cycle (two or more keys, or one key referencing itself). */
export function cyclicComponents(graph: ReferenceGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const result: string[][] = [];
  let counter = 0;
  const open = (key: string, frames: Frame[]): void => {
    index.set(key, counter);
    low.set(key, counter);
    counter += 1;
    stack.push(key);
    onStack.add(key);
    frames.push({ key, targets: sortedTargets(graph, key), next: 0 });
  };
  for (const root of [...graph.keys()].sort(byCodeUnit)) {
    if (index.has(root)) continue;
    const frames: Frame[] = [];
    open(root, frames);
    while (frames.length > 0) {
      const frame = frames[frames.length - 1] as Frame;
      const target = frame.targets[frame.next];
      if (target !== undefined) {
        frame.next += 1;
        if (!index.has(target)) open(target, frames);
        else if (onStack.has(target)) low.set(frame.key, Math.min(low.get(frame.key) ?? 0, index.get(target) ?? 0));
        continue;
      }
      frames.pop();
      const parent = frames[frames.length - 1];
      if (parent !== undefined) low.set(parent.key, Math.min(low.get(parent.key) ?? 0, low.get(frame.key) ?? 0));
      if (low.get(frame.key) !== index.get(frame.key)) continue;
      const component: string[] = [];
      for (;;) {
        const member = stack.pop();
        if (member === undefined) break;
        onStack.delete(member);
        component.push(member);
        if (member === frame.key) break;
      }
      const selfLoop = component.length === 1 && (graph.get(frame.key)?.has(frame.key) ?? false);
      if (component.length > 1 || selfLoop) result.push(component.sort(byCodeUnit));
    }
  }
  return result;
}

/**
 * The shortest cycle from `start` back to itself inside `members` (`[start, …, start]`), ties broken by key.
 * Pass one `cache` of sorted targets across calls on the same graph.
 */
export function shortestCycle(graph: ReferenceGraph, start: string, members: ReadonlySet<string>, cache = new Map<string, string[]>()): string[] {
  const previous = new Map<string, string>();
  const queue: string[] = [start];
  for (let head = 0; head < queue.length; head += 1) {
    const key = queue[head] as string;
    let targets = cache.get(key);
    if (targets === undefined) cache.set(key, (targets = sortedTargets(graph, key)));
    for (const target of targets) {
      if (!members.has(target)) continue;
      if (target === start) {
        const back: string[] = [];
        for (let k: string | undefined = key; k !== undefined && k !== start; k = previous.get(k)) back.push(k);
        return [start, ...back.reverse(), start];
      }
      if (!previous.has(target)) {
        previous.set(target, key);
        queue.push(target);
      }
    }
  }
  return [start, start];
}

/**
 * The keys that stay usable: not broken themselves and not referencing (directly or through others) a broken
 * or missing key. Broken-ness spreads backwards along references from every broken or dangling key, so
 * A → B → C → missing Z removes all three whatever the order, in time linear in the graph.
 */
export function healthyKeys(graph: ReferenceGraph, broken: ReadonlySet<string>): Set<string> {
  const referrers = new Map<string, string[]>();
  const pending: string[] = [];
  const removed = new Set<string>();
  const remove = (key: string): void => {
    if (removed.has(key)) return;
    removed.add(key);
    pending.push(key);
  };
  for (const [key, targets] of graph) {
    if (broken.has(key)) remove(key);
    for (const target of targets.keys()) {
      if (!graph.has(target)) remove(key);
      else {
        const list = referrers.get(target);
        if (list === undefined) referrers.set(target, [key]);
        else list.push(key);
      }
    }
  }
  for (let key = pending.pop(); key !== undefined; key = pending.pop()) {
    for (const referrer of referrers.get(key) ?? []) remove(referrer);
  }
  return new Set([...graph.keys()].filter((k) => !removed.has(k)));
}
