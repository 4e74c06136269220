E='eval "$E"'
eval "$E"
