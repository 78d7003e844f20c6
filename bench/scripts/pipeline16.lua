-- wrk script: every write carries 16 pipelined GET requests for the URL's path
-- (bench/scripts/h1cmp.sh and slices.sh with PIPE=1).
init = function(args)
  local r = {}
  for i = 1, 16 do r[i] = wrk.format(nil, wrk.path) end
  req = table.concat(r)
end
request = function() return req end
