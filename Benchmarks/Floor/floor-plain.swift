// The floor without Foundation (see floor-foundation.swift): the Swift runtime alone, printing one
// line.
print("snoozefuse floor")
