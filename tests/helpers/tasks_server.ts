/** A server of the everything server's task fixtures alone, for the task tests. */

import { defineServer } from "@anubis/core";
import { taskTools } from "../../examples/everything/task_tools.ts";

export default defineServer({ name: "tasks", version: "1.0.0", tools: taskTools });
