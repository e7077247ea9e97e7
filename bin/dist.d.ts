// Types of bin/dist.js (plain JavaScript, read by bin/llmgw.js before TypeScript can load).
export declare const BUILT_STAMP: string;
export declare function distFresh(root: string): boolean;
export declare function runsDist(root: string, env?: NodeJS.ProcessEnv): boolean;
export declare function moduleArgs(root: string, rel: string, env?: NodeJS.ProcessEnv): string[];
