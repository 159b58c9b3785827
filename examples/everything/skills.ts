/**
 * The everything server's skills (SEP-2640): one read from a folder on disk
 * (`skills/pdf-processing`, with a `references/` and a `scripts/` folder), one
 * defined in memory under a two-segment skill path.
 *
 * @module
 */

import { defineSkill, type SkillDefinition, skillsFromDirectory } from "@anubis/core";

const fromDisk = await skillsFromDirectory(new URL("./skills", import.meta.url));

const releaseNotes = defineSkill({
  "SKILL.md": [
    "---",
    "name: release-notes",
    "description: Write release notes from a list of merged changes.",
    "---",
    "",
    "Group the changes by area, lead with what users notice, and keep one line per change.",
    "",
  ].join("\n"),
  "templates/NOTES.md": "# Release {version}\n\n## Changes\n",
}, { path: "acme/release-notes" });

/** Every skill the everything server serves. */
export const skills: SkillDefinition[] = [...fromDisk, releaseNotes];
