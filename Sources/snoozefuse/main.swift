import SnoozeFuseCore
print("x")
