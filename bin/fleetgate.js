#!/usr/bin/env node
// The sources are TypeScript run through tsx's loader, so a clean checkout
// needs no build step between `npm install` and `npm start`.
import { register } from "tsx/esm/api";

register();
await import("../src/cli.ts");
