-- post.lua with every response checked (run.ts --check-bodies): a JSON-RPC
-- result with the expected id that contains the expected text.
-- wrk -s post_checked.lua URL -- ID TEXT BODY "Name: value"...
-- wrk reads whether a script has response() when it loads it, so the
-- checked form is a script of its own.
dofile("post.lua")
dofile("check.lua")

local post_init = init

function init(args)
  expected_id = args[1]
  expected_text = args[2]
  local rest = {}
  for i = 3, #args do table.insert(rest, args[i]) end
  post_init(rest)
end

function response(status, headers, body)
  check_result(status, body, expected_id, expected_text)
end
